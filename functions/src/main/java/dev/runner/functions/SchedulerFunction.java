package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.app.Runner;
import dev.runner.schedule.Scheduler;

import java.time.Instant;
import java.util.Map;

/** The EventBridge tick: due schedules into runs with trigger schedule. */
public final class SchedulerFunction implements RequestHandler<ScheduledEvent, String> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public SchedulerFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public SchedulerFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public SchedulerFunction(Runner runner) {
        this.runner = runner;
    }

    /** Uses the clock, not the event's time: a late or retried tick must still see what is due now. */
    @Override
    public String handleRequest(ScheduledEvent event, Context context) {
        Scheduler.Tick tick = runner.scheduler().tick(Instant.now());
        return "fired=" + tick.fired() + " skipped=" + tick.skipped() + " resent=" + tick.resent() + " itemsResent=" + tick.itemsResent();
    }
}
