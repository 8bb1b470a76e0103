package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.pipeline.ItemWorker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Items tiers: admission, claim, handler call, report. */
public final class ItemWorkerFunction implements RequestStreamHandler {

    /** Deferrals and retries go back to the item's tier as messages of their own, final failures to the items DLQ. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.itemsTiers()).sendingTo(QueueRole.ITEMS_DLQ)
            .reading(SecretRole.DATABASE, SecretRole.HANDLER_SIGNING_KEY, SecretRole.REDIS_AUTH, SecretRole.CALLBACK_KEY);

    private final ItemWorker worker;
    private final Invocation<SQSEvent, SQSBatchResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public ItemWorkerFunction() {
        this(Invocation.lambdaRoot());
        // Its main path reads and writes Postgres and Redis; SQS only for deferrals, retries and failures.
        invocation.openAtInit(ItemWorkerFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public ItemWorkerFunction(Runner runner) {
        this.worker = runner.serve(GRANTS).itemWorker();
        this.invocation = new Invocation<>(runner, SQSEvent.class, SQSBatchResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event ->
                SqsEvents.response(worker.process(SqsEvents.messages(event), context::getRemainingTimeInMillis).failedMessageIds()));
    }
}
