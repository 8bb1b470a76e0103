package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.intake.IngestService;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** The ingest queue: envelopes from external producers into runs with trigger queue. */
public final class IngestFunction implements RequestStreamHandler {

    /** Ingested items go to the queue tier; rejected envelopes are kept in Postgres, not sent anywhere. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.ITEMS_QUEUE)
            .reading(SecretRole.DATABASE, SecretRole.REDIS_AUTH);

    private final IngestService ingest;
    private final Invocation<SQSEvent, SQSBatchResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public IngestFunction() {
        this(Invocation.lambdaRoot());
        // Its main path is Postgres only.
        invocation.openAtInit(IngestFunction.class, Runner.Connection.DATABASE);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public IngestFunction(Runner runner) {
        this.ingest = runner.serve(GRANTS).ingest();
        this.invocation = new Invocation<>(runner, SQSEvent.class, SQSBatchResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> SqsEvents.response(ingest.process(SqsEvents.messages(event))));
    }
}
