package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Runner;
import dev.runner.pipeline.IngestService;

/** The ingest queue: envelopes from external producers into runs with trigger queue. */
public final class IngestFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final IngestService ingest;
    private final Invocation invocation = new Invocation();

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public IngestFunction() {
        this(Invocation.lambdaRoot());
    }

    /** Builds, at init, only what this function uses (connections open on first use). */
    public IngestFunction(Runner runner) {
        this.ingest = runner.ingest();
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return invocation.run(context, () -> SqsEvents.response(ingest.process(SqsEvents.messages(event))));
    }
}
