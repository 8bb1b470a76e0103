package dev.runner.pipeline;

import dev.runner.log.Log;
import dev.runner.run.RunJob;
import dev.runner.schedule.ScheduleExpression;
import dev.runner.schedule.ScheduleStore;
import dev.runner.trigger.Trigger;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One tick (EventBridge, every minute): every due schedule becomes a run with trigger schedule.
 * Due rows are locked with SKIP LOCKED and each run carries a fire key unique in Postgres, so two
 * overlapping ticks never fire a schedule twice for the same due time. A schedule that missed
 * several due times (an outage) fires once and moves to its next due time after now. Handlers
 * are resolved before the transaction opens, so the tick never holds a connection while it waits
 * for another. Each tick also sweeps, busy tiers or not: work whose message was
 * lost when a send failed after its rows were committed (a webhook, ingest, redrive, resume, a
 * manual or scheduled run) is sent again, a run whose completion was lost is completed, bulk actions
 * (redrive, cancel, resume, enable) go on a page at a time, and the items tenants hold back beyond
 * their horizon are released as their slots come near ({@link Sweeps}).
 */
public final class Scheduler {

    private static final Log LOG = Log.of(Scheduler.class);
    private static final int MAX_PER_TICK = 500;
    /** Where a schedule that never fires again waits: the tenant's config still names it, so it is not deleted. */
    private static final Instant NEVER = Instant.parse("9999-12-31T00:00:00Z");

    /** What a tick did. */
    public record Tick(int fired, int skipped, int resent, int itemsResent, int runsCompleted) {}

    private final ScheduleStore schedules;
    private final RunService runs;
    private final RunDispatcher dispatcher;
    private final Sweeps sweeps;

    public Scheduler(ScheduleStore schedules, RunService runs, RunDispatcher dispatcher, Sweeps sweeps) {
        this.schedules = schedules;
        this.runs = runs;
        this.dispatcher = dispatcher;
        this.sweeps = sweeps;
    }

    public Tick tick(Instant now) {
        List<ScheduleStore.Due> due = schedules.due(now, MAX_PER_TICK);
        Map<String, RunJob> prepared = new HashMap<>();
        int skipped = 0;
        for (ScheduleStore.Due schedule : due) {
            try {
                prepared.put(schedule.fireKey(), runs.prepareFetching(new RunService.Request(schedule.tenantId(),
                        schedule.integrationKey(), schedule.handlerKey(), Trigger.SCHEDULE)));
            } catch (RunService.RunRefused e) {
                skipped++;
                LOG.warn("schedule skipped", "tenantId", schedule.tenantId(), "integrationKey", schedule.integrationKey(),
                        "handlerKey", schedule.handlerKey(), "why", e.getMessage());
            }
        }
        List<RunJob> created = dispatcher.commitThenSend(connection -> {
            List<RunJob> jobs = new ArrayList<>();
            for (ScheduleStore.Due schedule : schedules.lockDue(connection, due, now)) {
                schedules.moveTo(connection, schedule, nextFire(schedule, now));
                RunJob job = prepared.get(schedule.fireKey());
                if (job != null && runs.insertQueued(connection, job, schedule.fireKey())) {
                    jobs.add(job);
                }
            }
            return jobs;
        }, jobs -> jobs);
        Sweeps.Swept sweep = sweeps.run();
        if (!created.isEmpty() || sweep.any()) {
            LOG.info("tick", "fired", created.size(), "skipped", skipped, "resent", sweep.runs(), "itemsResent", sweep.items(),
                    "runsCompleted", sweep.completed(), "callbacksTimedOut", sweep.timedOut(), "bulkItems", sweep.bulk(),
                    "deliveriesForgotten", sweep.purged(), "retentionDeleted", sweep.trimmed(), "backlogReleased", sweep.released());
        }
        return new Tick(created.size(), skipped, sweep.runs(), sweep.items(), sweep.completed());
    }

    private static Instant nextFire(ScheduleStore.Due schedule, Instant now) {
        Instant dueAt = schedule.dueAt();
        try {
            return ScheduleExpression.parse(schedule.expression()).nextAfter(now.isAfter(dueAt) ? now : dueAt).orElse(NEVER);
        } catch (IllegalArgumentException e) {
            return NEVER;
        }
    }
}
