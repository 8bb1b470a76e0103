package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import dev.runner.app.Runner;

import java.util.Map;

/** Items tiers: admission, claim, handler call, report. */
public final class ItemWorkerFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public ItemWorkerFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public ItemWorkerFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public ItemWorkerFunction(Runner runner) {
        this.runner = runner;
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return SqsEvents.response(runner.itemWorker().process(SqsEvents.messages(event), context::getRemainingTimeInMillis).failedMessageIds());
    }
}
