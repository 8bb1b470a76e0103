package dev.runner.pipeline;

import dev.runner.backlog.BacklogRelease;
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
import java.util.function.Supplier;

/**
 * One tick (EventBridge, every minute): every due schedule becomes a run with trigger schedule.
 * Due rows are locked with SKIP LOCKED and each run carries a fire key unique in Postgres, so two
 * overlapping ticks never fire a schedule twice for the same due time. A schedule that missed
 * several due times (an outage) fires once and moves to its next due time after now. Handlers
 * are resolved before the transaction opens, so the tick never holds a connection while it waits
 * for another. Each tick also sweeps ({@link #sweep}), busy tiers or not: work whose message was
 * lost when a send failed after its rows were committed (a webhook, ingest, redrive, resume, a
 * manual or scheduled run) is sent again, and a run whose completion was lost is completed; and
 * releases the items tenants hold back beyond their horizon as their slots come near ({@link BacklogRelease}).
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
    private final LostWorkSweep lostWork;
    private final RetentionSweep retention;
    private final BacklogRelease backlog;

    public Scheduler(ScheduleStore schedules, RunService runs, RunDispatcher dispatcher, LostWorkSweep lostWork, RetentionSweep retention,
                     BacklogRelease backlog) {
        this.schedules = schedules;
        this.runs = runs;
        this.dispatcher = dispatcher;
        this.lostWork = lostWork;
        this.retention = retention;
        this.backlog = backlog;
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
        Sweep sweep = sweep();
        if (!created.isEmpty() || sweep.any()) {
            LOG.info("tick", "fired", created.size(), "skipped", skipped, "resent", sweep.runs(), "itemsResent", sweep.items(),
                    "runsCompleted", sweep.completed(), "deliveriesForgotten", sweep.purged(), "retentionDeleted", sweep.trimmed(),
                    "backlogReleased", sweep.released());
        }
        return new Tick(created.size(), skipped, sweep.runs(), sweep.items(), sweep.completed());
    }

    private record Sweep(int runs, int items, int completed, int purged, long trimmed, int released) {
        boolean any() {
            return runs + items + completed + purged + trimmed + released > 0;
        }
    }

    /**
     * Every tick whatever the traffic, the sweep's parts in turn (LostWorkSweep, RetentionSweep):
     * owed messages, overdue runs and items, abandoned runs, then what is past its window or its
     * retention. Each part runs even when one before it failed.
     */
    private Sweep sweep() {
        LostWorkSweep.Resent owed = attempt("owed messages", lostWork::sendOwed, new LostWorkSweep.Resent(0, 0));
        int overdueRuns = attempt("overdue runs", lostWork::resendOverdueRuns, 0);
        int overdueItems = attempt("overdue items", lostWork::resendOverdueItems, 0);
        int completed = attempt("abandoned runs", lostWork::completeAbandoned, 0);
        int purged = attempt("purge", retention::forget, 0);
        long trimmed = attempt("retention", retention::trim, 0L);
        int released = attempt("backlog", backlog::release, 0);
        return new Sweep(owed.runs() + overdueRuns, owed.items() + overdueItems, completed, purged, trimmed, released);
    }

    /** One part of the sweep; a failure is logged and the tick goes on (the next tick tries again). */
    private static <T> T attempt(String part, Supplier<T> work, T none) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            LOG.warn("sweep part failed; the next tick tries again", "part", part, "error", e);
            return none;
        }
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
