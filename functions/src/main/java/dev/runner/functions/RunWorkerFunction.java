package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.pipeline.RunWorker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Runs tiers: fetch pages and fan out; continues in a new message when time runs short. */
public final class RunWorkerFunction implements RequestStreamHandler {

    /** A run continues on its own runs tier and fans out onto its trigger's items tier: only manual and scheduled runs fetch. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.RUNS_MANUAL, QueueRole.RUNS_SCHEDULE, QueueRole.ITEMS_MANUAL, QueueRole.ITEMS_SCHEDULE)
            .changingVisibilityOn(QueueRole.RUNS_MANUAL, QueueRole.RUNS_SCHEDULE)
            .reading(SecretRole.DATABASE, SecretRole.HANDLER_SIGNING_KEY, SecretRole.REDIS_AUTH);

    private final RunWorker worker;
    private final Invocation<SQSEvent, SQSBatchResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public RunWorkerFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(RunWorkerFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public RunWorkerFunction(Runner runner) {
        this.worker = runner.serve(GRANTS).runWorker();
        this.invocation = new Invocation<>(runner, SQSEvent.class, SQSBatchResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context,
                event -> SqsEvents.response(worker.process(SqsEvents.messages(event), context::getRemainingTimeInMillis)));
    }
}
