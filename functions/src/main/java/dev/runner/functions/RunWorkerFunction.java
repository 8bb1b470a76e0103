package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import dev.runner.app.Runner;

import java.util.Map;

/** Runs tiers: fetch pages and fan out; continues in a new message when time runs short. */
public final class RunWorkerFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public RunWorkerFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public RunWorkerFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public RunWorkerFunction(Runner runner) {
        this.runner = runner;
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return SqsEvents.response(runner.runWorker().process(SqsEvents.messages(event), context::getRemainingTimeInMillis));
    }
}
