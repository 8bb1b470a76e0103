package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.pipeline.Scheduler;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;

/** The EventBridge tick: due schedules into runs with trigger schedule. */
public final class SchedulerFunction implements RequestStreamHandler {

    /** Due schedules' RunJobs; the sweep re-sends stale runs (both runs tiers) and stale items (every items tier). */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.RUNS_MANUAL, QueueRole.RUNS_SCHEDULE).sendingTo(QueueRole.itemsTiers())
            // A pending item timed out on its last attempt goes to the items DLQ, as its worker would send it.
            .sendingTo(QueueRole.ITEMS_DLQ)
            // The sweep re-sends only on tiers without a visible backlog.
            .readingAttributesOf(QueueRole.RUNS_MANUAL, QueueRole.RUNS_SCHEDULE).readingAttributesOf(QueueRole.itemsTiers())
            .reading(SecretRole.DATABASE, SecretRole.REDIS_AUTH);

    private final Scheduler scheduler;
    private final Invocation<ScheduledEvent, String> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public SchedulerFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(SchedulerFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public SchedulerFunction(Runner runner) {
        this.scheduler = runner.serve(GRANTS).scheduler();
        this.invocation = new Invocation<>(runner, ScheduledEvent.class, String.class);
    }

    /** Uses the clock, not the event's time: a late or retried tick must still see what is due now. */
    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> {
            Scheduler.Tick tick = scheduler.tick(Instant.now());
            return "fired=" + tick.fired() + " skipped=" + tick.skipped() + " resent=" + tick.resent() + " itemsResent=" + tick.itemsResent()
                    + " runsCompleted=" + tick.runsCompleted();
        });
    }
}
