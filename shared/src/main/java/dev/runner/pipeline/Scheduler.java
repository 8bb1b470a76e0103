package dev.runner.pipeline;

import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.run.RunJob;
import dev.runner.run.RunStore;
import dev.runner.schedule.ScheduleExpression;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.time.Duration;
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
 * for another. Each tick also re-sends runs and items left queued too long: their message may
 * have been lost when a send failed after its rows were committed (a webhook, ingest, redrive or resume).
 */
public final class Scheduler {

    private static final Log LOG = Log.of(Scheduler.class);
    private static final int MAX_PER_TICK = 500;
    private static final int MAX_STALE_ITEMS = 5_000;
    private static final int STALE_QUEUED_SECONDS = 600;
    /** Longer than SQS's longest delay (15 min), so an item deferred at the source is not taken for lost. */
    private static final Duration STALE_ITEM = Duration.ofMinutes(30);
    /** Where a schedule that never fires again waits: the tenant's config still names it, so it is not deleted. */
    private static final Instant NEVER = Instant.parse("9999-12-31T00:00:00Z");

    /** What a tick did. */
    public record Tick(int fired, int skipped, int resent, int itemsResent) {}

    private final Database db;
    private final ScheduleStore schedules;
    private final RunService runs;
    private final RunStore runStore;
    private final ItemStore items;
    private final ItemDispatcher dispatcher;

    public Scheduler(Database db, ScheduleStore schedules, RunService runs, RunStore runStore, ItemStore items,
                     ItemDispatcher dispatcher) {
        this.db = db;
        this.schedules = schedules;
        this.runs = runs;
        this.runStore = runStore;
        this.items = items;
        this.dispatcher = dispatcher;
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
        List<RunJob> created = db.inTransaction(connection -> {
            List<RunJob> jobs = new ArrayList<>();
            for (ScheduleStore.Due schedule : schedules.lockDue(connection, due, now)) {
                schedules.moveTo(connection, schedule, nextFire(schedule, now));
                RunJob job = prepared.get(schedule.fireKey());
                if (job != null && runs.insertQueued(connection, job, schedule.fireKey())) {
                    jobs.add(job);
                }
            }
            return jobs;
        });
        runs.enqueue(created);
        List<RunJob> stale = runStore.staleQueued(STALE_QUEUED_SECONDS, MAX_PER_TICK);
        runs.enqueue(stale);
        List<ItemJob> staleItems = items.staleQueued(STALE_ITEM, MAX_STALE_ITEMS);
        dispatcher.dispatch(staleItems);
        if (!created.isEmpty() || !stale.isEmpty() || !staleItems.isEmpty()) {
            LOG.info("tick", "fired", created.size(), "skipped", skipped, "resent", stale.size(), "itemsResent", staleItems.size());
        }
        return new Tick(created.size(), skipped, stale.size(), staleItems.size());
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
