package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import dev.runner.app.Runner;

import java.util.Map;

/** The ingest queue: envelopes from external producers into runs with trigger queue. */
public final class IngestFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public IngestFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public IngestFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public IngestFunction(Runner runner) {
        this.runner = runner;
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return SqsEvents.response(runner.ingest().process(SqsEvents.messages(event)));
    }
}
