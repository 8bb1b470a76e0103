package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryStore;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.outbox.OutboxStore;
import dev.runner.queue.QueueClient;
import dev.runner.retention.RetentionStore;
import dev.runner.run.RunJob;
import dev.runner.run.RunRequestStore;
import dev.runner.run.RunStore;
import dev.runner.schedule.ScheduleExpression;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One tick (EventBridge, every minute): every due schedule becomes a run with trigger schedule.
 * Due rows are locked with SKIP LOCKED and each run carries a fire key unique in Postgres, so two
 * overlapping ticks never fire a schedule twice for the same due time. A schedule that missed
 * several due times (an outage) fires once and moves to its next due time after now. Handlers
 * are resolved before the transaction opens, so the tick never holds a connection while it waits
 * for another. Each tick also sweeps ({@link #sweep}), busy tiers or not: work whose message was
 * lost when a send failed after its rows were committed (a webhook, ingest, redrive, resume, a
 * manual or scheduled run) is sent again, and a run whose completion was lost is completed.
 */
public final class Scheduler {

    private static final Log LOG = Log.of(Scheduler.class);
    private static final int MAX_PER_TICK = 500;
    private static final int MAX_OVERDUE_ITEMS = 5_000;
    /** Owed sends taken per tick: one per commit, each up to a page of items. */
    private static final int MAX_OWED_PER_TICK = 100;
    private static final int MAX_PURGED_DELIVERIES = 10_000;
    /** Rows per retention batch (one short transaction each), and how much of a tick retention may take. */
    private static final int RETENTION_BATCH = 10_000;
    private static final Duration RETENTION_BUDGET = Duration.ofSeconds(15);
    /** Where a schedule that never fires again waits: the tenant's config still names it, so it is not deleted. */
    private static final Instant NEVER = Instant.parse("9999-12-31T00:00:00Z");

    /** What a tick did. */
    public record Tick(int fired, int skipped, int resent, int itemsResent, int runsCompleted) {}

    private final RunnerConfig config;
    private final Database db;
    private final ScheduleStore schedules;
    private final RunService runs;
    private final RunStore runStore;
    private final ItemStore items;
    private final DeliveryStore deliveries;
    private final QueueClient queues;
    private final ItemDispatcher dispatcher;
    private final OutboxStore outbox;
    private final RunRequestStore runRequests;
    private final RetentionStore retention;

    public Scheduler(RunnerConfig config, Database db, ScheduleStore schedules, RunService runs, RunStore runStore, ItemStore items,
                     DeliveryStore deliveries, QueueClient queues, ItemDispatcher dispatcher, OutboxStore outbox,
                     RunRequestStore runRequests) {
        this.config = config;
        this.db = db;
        this.schedules = schedules;
        this.runs = runs;
        this.runStore = runStore;
        this.items = items;
        this.deliveries = deliveries;
        this.queues = queues;
        this.dispatcher = dispatcher;
        this.outbox = outbox;
        this.runRequests = runRequests;
        this.retention = new RetentionStore(db, Clock.systemUTC());
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
        record Fired(List<RunJob> jobs, OutboxStore.Owed owed) {}
        Fired fired = db.inTransaction(connection -> {
            List<RunJob> jobs = new ArrayList<>();
            for (ScheduleStore.Due schedule : schedules.lockDue(connection, due, now)) {
                schedules.moveTo(connection, schedule, nextFire(schedule, now));
                RunJob job = prepared.get(schedule.fireKey());
                if (job != null && runs.insertQueued(connection, job, schedule.fireKey())) {
                    jobs.add(job);
                }
            }
            return new Fired(jobs, outbox.owe(connection, OutboxStore.Kind.RUNS, jobs.stream().map(RunJob::runId).toList()));
        });
        List<RunJob> created = fired.jobs();
        runs.sendOwed(created, List.of(fired.owed()));
        Sweep sweep = sweep();
        if (!created.isEmpty() || sweep.any()) {
            LOG.info("tick", "fired", created.size(), "skipped", skipped, "resent", sweep.runs(), "itemsResent", sweep.items(),
                    "runsCompleted", sweep.completed(), "deliveriesForgotten", sweep.purged(), "retentionDeleted", sweep.trimmed());
        }
        return new Tick(created.size(), skipped, sweep.runs(), sweep.items(), sweep.completed());
    }

    private record Sweep(int runs, int items, int completed, int purged, long trimmed) {
        boolean any() {
            return runs + items + completed + purged + trimmed > 0;
        }
    }

    /**
     * Work a lost send left behind, every tick whatever the traffic: messages committed work still
     * owes (OutboxStore) after RUNNER_SWEEP_UNSENT_S are sent. Then, as a backstop for a message
     * lost any other way, runs and items whose message is long overdue are sent again, only on tiers
     * without a visible backlog (there a message may just be waiting its turn, and nothing tells it
     * from a lost one). Runs whose items all ended are completed; deliveries and idempotency keys
     * older than their windows are forgotten, and runs, items and dead letters past retention deleted
     * (RetentionStore). Each part runs even when one before it failed.
     */
    private Sweep sweep() {
        RunnerConfig.Sweeps settings = config.sweeps();
        Resent owed = attempt("owed messages", () -> sendOwed(settings), new Resent(0, 0));
        int overdueRuns = attempt("overdue runs", () -> {
            List<RunJob> overdue = runStore.overdueQueued(settings.runsOverdue(), quietTiers(config.queues().runs()), MAX_PER_TICK);
            runs.enqueue(overdue);
            return overdue.size();
        }, 0);
        int overdueItems = attempt("overdue items", () -> {
            List<ItemJob> overdue = items.overdue(settings.itemsOverdue(), quietTiers(config.queues().items()), MAX_OVERDUE_ITEMS);
            dispatcher.dispatch(overdue);
            return overdue.size();
        }, 0);
        int completed = attempt("abandoned runs", () -> runStore.completeAbandoned(settings.completionQuiet(), MAX_PER_TICK).size(), 0);
        int purged = attempt("purge", () -> deliveries.purge(config.webhooks().dedupWindow(), MAX_PURGED_DELIVERIES)
                + runRequests.purge(config.runIdempotencyWindow(), MAX_PURGED_DELIVERIES), 0);
        long trimmed = attempt("retention", () -> retention.trim(config.retention(), RETENTION_BATCH, RETENTION_BUDGET).total(), 0L);
        return new Sweep(owed.runs() + overdueRuns, owed.items() + overdueItems, completed, purged, trimmed);
    }

    /** What the owed part of a sweep sent. */
    private record Resent(int runs, int items) {}

    /** Owed messages whose send failed or never ran: sent now, one batch per kind, settled once sent. */
    private Resent sendOwed(RunnerConfig.Sweeps settings) {
        List<OutboxStore.Owed> overdue = outbox.overdue(settings.unsent(), MAX_OWED_PER_TICK);
        List<OutboxStore.Owed> owedRuns = overdue.stream().filter(o -> o.kind() == OutboxStore.Kind.RUNS).toList();
        List<OutboxStore.Owed> owedItems = overdue.stream().filter(o -> o.kind() == OutboxStore.Kind.ITEMS).toList();
        List<RunJob> runJobs = runStore.queued(owedRuns.stream().flatMap(o -> o.ids().stream()).toList());
        boolean runsSent = runs.sendOwed(runJobs, owedRuns);
        List<ItemJob> itemJobs = items.queued(owedItems.stream().flatMap(o -> o.ids().stream()).toList());
        boolean itemsSent = dispatcher.sendOwed(itemJobs, owedItems);
        return new Resent(runsSent ? runJobs.size() : 0, itemsSent ? itemJobs.size() : 0);
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

    /** The tiers whose queue shows no visible message now. */
    private Set<Trigger> quietTiers(Map<Trigger, String> tiers) {
        Set<Trigger> quiet = EnumSet.noneOf(Trigger.class);
        tiers.forEach((trigger, url) -> {
            if (queues.visibleMessages(url) == 0) {
                quiet.add(trigger);
            }
        });
        return quiet;
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
