package dev.runner.local.lambda;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;

/** The Lambda context of one local invocation: the remaining time runs down from the function's Timeout. */
final class LocalContext implements Context {

    private static final LambdaLogger LOGGER = new LambdaLogger() {
        @Override
        public void log(String message) {
            System.err.println(message);
        }

        @Override
        public void log(byte[] message) {
            System.err.println(new String(message, StandardCharsets.UTF_8));
        }
    };

    private final String requestId = UUID.randomUUID().toString();
    private final LocalFunction function;
    private final Instant deadline;
    private final Clock clock;

    LocalContext(LocalFunction function, Instant deadline, Clock clock) {
        this.function = function;
        this.deadline = deadline;
        this.clock = clock;
    }

    @Override
    public String getAwsRequestId() {
        return requestId;
    }

    @Override
    public String getLogGroupName() {
        return "/aws/lambda/" + function.name();
    }

    @Override
    public String getLogStreamName() {
        return "local/" + function.name();
    }

    @Override
    public String getFunctionName() {
        return function.name();
    }

    @Override
    public String getFunctionVersion() {
        return "$LATEST";
    }

    @Override
    public String getInvokedFunctionArn() {
        return function.arn();
    }

    @Override
    public CognitoIdentity getIdentity() {
        return null;
    }

    @Override
    public ClientContext getClientContext() {
        return null;
    }

    @Override
    public int getRemainingTimeInMillis() {
        long left = deadline.toEpochMilli() - clock.millis();
        return (int) Math.max(0, Math.min(Integer.MAX_VALUE, left));
    }

    @Override
    public int getMemoryLimitInMB() {
        return function.memoryMb();
    }

    @Override
    public LambdaLogger getLogger() {
        return LOGGER;
    }
}
