package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.ClientContext;
import com.amazonaws.services.lambda.runtime.CognitoIdentity;
import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.LambdaLogger;

import java.util.UUID;

/** A Lambda context whose deadline is {@code timeoutMillis} after its creation. */
record TestContext(String functionName, long deadlineMillis) implements Context {

    static TestContext of(String functionName, long timeoutMillis) {
        return new TestContext(functionName, System.currentTimeMillis() + timeoutMillis);
    }

    @Override public String getAwsRequestId() { return UUID.randomUUID().toString(); }
    @Override public String getLogGroupName() { return "/aws/lambda/" + functionName; }
    @Override public String getLogStreamName() { return "test"; }
    @Override public String getFunctionName() { return functionName; }
    @Override public String getFunctionVersion() { return "$LATEST"; }
    @Override public String getInvokedFunctionArn() { return "arn:aws:lambda:us-east-1:000000000000:function:" + functionName; }
    @Override public CognitoIdentity getIdentity() { return null; }
    @Override public ClientContext getClientContext() { return null; }
    @Override public int getRemainingTimeInMillis() { return (int) Math.max(0, deadlineMillis - System.currentTimeMillis()); }
    @Override public int getMemoryLimitInMB() { return 1024; }
    @Override public LambdaLogger getLogger() {
        return new LambdaLogger() {
            @Override public void log(String message) { System.out.println(message); }
            @Override public void log(byte[] message) { System.out.println(new String(message)); }
        };
    }
}
