package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.SecretRole;
import dev.runner.pipeline.DeadLetterService;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** The DLQs: dead items stamped, failed runs marked, the rest kept in dead_letters. */
public final class DeadLetterFunction implements RequestStreamHandler {

    /** Sends nothing: it records in Postgres what reaches the DLQs. */
    public static final Grants GRANTS = Grants.none()
            .reading(SecretRole.DATABASE);

    private final DeadLetterService deadLetters;
    private final Invocation<SQSEvent, SQSBatchResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public DeadLetterFunction() {
        this(Invocation.lambdaRoot());
        // Its main path is Postgres only.
        invocation.openAtInit(DeadLetterFunction.class, Runner.Connection.DATABASE);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public DeadLetterFunction(Runner runner) {
        this.deadLetters = runner.serve(GRANTS).deadLetters();
        this.invocation = new Invocation<>(runner, SQSEvent.class, SQSBatchResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> {
            // Only a dead letter for an item still in a call comes back; what cannot be stamped is kept in dead_letters.
            return SqsEvents.response(deadLetters.process(SqsEvents.messages(event)));
        });
    }
}
