package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Runner;
import dev.runner.pipeline.RunWorker;

/** Runs tiers: fetch pages and fan out; continues in a new message when time runs short. */
public final class RunWorkerFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final RunWorker worker;
    private final Invocation invocation = new Invocation();

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public RunWorkerFunction() {
        this(Invocation.lambdaRoot());
    }

    /** Builds, at init, only what this function uses (connections open on first use). */
    public RunWorkerFunction(Runner runner) {
        this.worker = runner.runWorker();
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return invocation.run(context, () -> SqsEvents.response(worker.process(SqsEvents.messages(event), context::getRemainingTimeInMillis)));
    }
}
