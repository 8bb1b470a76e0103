package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.app.Runner;
import dev.runner.pipeline.Scheduler;

import java.time.Instant;

/** The EventBridge tick: due schedules into runs with trigger schedule. */
public final class SchedulerFunction implements RequestHandler<ScheduledEvent, String> {

    private final Scheduler scheduler;
    private final Invocation invocation = new Invocation();

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public SchedulerFunction() {
        this(Invocation.lambdaRoot());
    }

    /** Builds, at init, only what this function uses (connections open on first use). */
    public SchedulerFunction(Runner runner) {
        this.scheduler = runner.scheduler();
    }

    /** Uses the clock, not the event's time: a late or retried tick must still see what is due now. */
    @Override
    public String handleRequest(ScheduledEvent event, Context context) {
        return invocation.run(context, () -> {
            Scheduler.Tick tick = scheduler.tick(Instant.now());
            return "fired=" + tick.fired() + " skipped=" + tick.skipped() + " resent=" + tick.resent() + " itemsResent=" + tick.itemsResent()
                    + " runsCompleted=" + tick.runsCompleted();
        });
    }
}
