package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Runner;
import dev.runner.pipeline.ItemWorker;

/** Items tiers: admission, claim, handler call, report. */
public final class ItemWorkerFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final ItemWorker worker;
    private final Invocation invocation = new Invocation();

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public ItemWorkerFunction() {
        this(Invocation.lambdaRoot());
    }

    /** Builds, at init, only what this function uses (connections open on first use). */
    public ItemWorkerFunction(Runner runner) {
        this.worker = runner.itemWorker();
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return invocation.run(context, () ->
                SqsEvents.response(worker.process(SqsEvents.messages(event), context::getRemainingTimeInMillis).failedMessageIds()));
    }
}
