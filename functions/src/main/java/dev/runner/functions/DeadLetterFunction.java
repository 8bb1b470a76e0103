package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import dev.runner.app.Runner;

import java.util.Map;

/** The DLQs: dead items stamped, failed runs marked, the rest kept in dead_letters. */
public final class DeadLetterFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public DeadLetterFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public DeadLetterFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public DeadLetterFunction(Runner runner) {
        this.runner = runner;
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        // Nothing here is retried by SQS: what cannot be stamped is kept in dead_letters instead.
        runner.deadLetters().process(SqsEvents.messages(event));
        return SqsEvents.response(java.util.List.of());
    }
}
