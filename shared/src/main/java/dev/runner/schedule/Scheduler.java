package dev.runner.schedule;

import dev.runner.item.ItemDispatcher;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.run.RunJob;
import dev.runner.run.RunService;
import dev.runner.run.RunStore;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One tick (EventBridge, every minute): every due schedule becomes a run with trigger schedule.
 * Due rows are locked with SKIP LOCKED and each run carries a fire key unique in Postgres, so two
 * overlapping ticks never fire a schedule twice for the same due time. A schedule that missed
 * several due times (an outage) fires once and moves to its next due time after now.
 * Each tick also re-sends runs and items left queued too long: their message may have been lost
 * when a send failed after its rows were committed (a webhook, ingest, redrive or resume).
 */
public final class Scheduler {

    private static final Log LOG = Log.of(Scheduler.class);
    private static final int MAX_PER_TICK = 500;
    private static final int MAX_STALE_ITEMS = 5_000;
    private static final int STALE_QUEUED_SECONDS = 600;
    /** Longer than SQS's longest delay (15 min), so an item deferred at the source is not taken for lost. */
    private static final Duration STALE_ITEM = Duration.ofMinutes(30);

    /** What a tick did. */
    public record Tick(int fired, int skipped, int resent, int itemsResent) {}

    private record Due(String tenantId, String integrationKey, String handlerKey, String expression, Instant dueAt) {}

    private final Database db;
    private final RunService runs;
    private final RunStore runStore;

    private final ItemStore items;
    private final ItemDispatcher dispatcher;

    public Scheduler(Database db, RunService runs, RunStore runStore, ItemStore items,
                     ItemDispatcher dispatcher) {
        this.db = db;
        this.runs = runs;
        this.runStore = runStore;
        this.items = items;
        this.dispatcher = dispatcher;
    }

    public Tick tick(Instant now) {
        int[] skipped = {0};
        List<RunJob> created = db.inTransaction(connection -> {
            List<Due> due = db.query(connection, """
                    select tenant_id, integration_key, handler_key, expression, next_fire_at from schedules
                    where next_fire_at <= ? order by next_fire_at limit ? for update skip locked
                    """, row -> new Due(row.getString(1), row.getString(2), row.getString(3), row.getString(4),
                    row.getTimestamp(5).toInstant()), now, MAX_PER_TICK);
            List<RunJob> jobs = new ArrayList<>();
            for (Due schedule : due) {
                Instant dueAt = schedule.dueAt();
                Optional<Instant> next;
                try {
                    next = ScheduleExpression.parse(schedule.expression()).nextAfter(now.isAfter(dueAt) ? now : dueAt);
                } catch (IllegalArgumentException e) {
                    next = Optional.empty();
                }
                // A schedule that never fires again is parked far in the future rather than deleted: the tenant's config still names it.
                Instant nextFire = next.orElse(Instant.parse("9999-12-31T00:00:00Z"));
                db.update(connection, """
                        update schedules set next_fire_at = ? where tenant_id = ? and integration_key = ? and handler_key = ?
                        """, nextFire, schedule.tenantId(), schedule.integrationKey(), schedule.handlerKey());
                String fireKey = schedule.tenantId() + "/" + schedule.integrationKey() + "/" + schedule.handlerKey() + "@" + dueAt;
                try {
                    jobs.addAll(runs.insertFetching(connection, List.of(new RunService.Request(schedule.tenantId(),
                            schedule.integrationKey(), schedule.handlerKey(), Trigger.SCHEDULE, fireKey))));
                } catch (RunService.RunRefused e) {
                    skipped[0]++;
                    LOG.warn("schedule skipped", "tenantId", schedule.tenantId(), "integrationKey", schedule.integrationKey(),
                            "handlerKey", schedule.handlerKey(), "why", e.getMessage());
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
            LOG.info("tick", "fired", created.size(), "skipped", skipped[0], "resent", stale.size(), "itemsResent", staleItems.size());
        }
        return new Tick(created.size(), skipped[0], stale.size(), staleItems.size());
    }

}
