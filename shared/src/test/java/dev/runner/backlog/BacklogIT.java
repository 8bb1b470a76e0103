package dev.runner.backlog;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.guard.Guard;
import dev.runner.guard.TenantSlot;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.redis.RedisTargets;
import dev.runner.redis.TestClock;
import dev.runner.run.RunJob;
import dev.runner.run.RunRef;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The backlog horizon on the real Postgres and Redis: a tenant's items past its horizon wait in
 * Postgres, unsent and not swept as lost; each scheduler tick releases as many as its window has
 * room for up to the horizon, and each released item is sent once; a cancel ends the held ones.
 */
class BacklogIT {

    /** 60 a minute, a two-minute horizon: 45 at once, 15 paced through the first minute, then one a second. */
    private static final RunnerConfig.TenantLimit LIMIT = new RunnerConfig.TenantLimit(60, Duration.ofSeconds(1), Duration.ofMinutes(2));

    private static TestStack stack;
    private static Database db;
    private static ItemStore items;
    private static RunStore runs;
    private static BacklogStore store;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 4, CostTracker.NONE);
        items = new ItemStore(db, Clock.systemUTC());
        runs = new RunStore(db);
        store = new BacklogStore(db);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void aBacklogBeyondTheHorizonWaitsInPostgresAndEachTickReleasesWhatComesNear() {
        TestClock clock = TestClock.now();
        Guard guard = new Guard(RedisTargets.standalone(), RedisTargets.uniqueKeys(), new RunnerConfig.Breaker(5, Duration.ofSeconds(30), 2),
                LIMIT, clock);
        BacklogHorizon horizon = new BacklogHorizon(guard, store, LIMIT.backlogHorizon(), dev.runner.metrics.Metrics.NONE);
        List<ItemJob> sent = new ArrayList<>();
        BacklogRelease release = new BacklogRelease(store, guard, LIMIT, jobs -> send(horizon, jobs, sent), clock);
        String tenant = "t-" + UUID.randomUUID();
        RunRef run = openRun(tenant);
        List<ItemJob> jobs = insert(run, 1000);

        send(horizon, jobs, sent);
        assertEquals(120, sent.size(), "up to the two-minute horizon: 60 in the first minute, 60 in the second");
        assertEquals(880L, store.heldCounts(List.of(tenant)).get(tenant));
        Set<UUID> sentIds = new HashSet<>(sent.stream().map(ItemJob::itemId).toList());
        assertTrue(items.overdue(Duration.ZERO, List.of(Trigger.MANUAL), 5_000).stream()
                        .filter(job -> job.tenantId().equals(tenant)).allMatch(job -> sentIds.contains(job.itemId())),
                "a held item has no message to lose: the overdue sweep leaves it alone");

        assertEquals(0, release.release(), "its window is reserved up to the horizon already");
        clock.advance(Duration.ofSeconds(60));
        assertEquals(60, release.release(), "a minute later, a minute's worth");
        assertEquals(180, sent.size(), "each released item sent once, none held again");
        assertEquals(820L, store.heldCounts(List.of(tenant)).get(tenant));
        Set<UUID> once = new HashSet<>();
        sent.forEach(job -> assertTrue(once.add(job.itemId()), "sent twice: " + job.itemId()));
        long lastSent = sent.stream().mapToLong(job -> createdMs(job.itemId())).max().orElseThrow();
        long firstHeld = jobs.stream().filter(job -> !once.contains(job.itemId())).mapToLong(job -> createdMs(job.itemId())).min().orElseThrow();
        assertTrue(lastSent <= firstHeld, "released in the order they came (to the millisecond of their ids)");

        boolean cancelled = db.inTransaction(connection -> runs.cancel(connection, run.runId()));
        assertTrue(cancelled);
        clock.advance(Duration.ofSeconds(60));
        assertEquals(0, release.release(), "a cancelled run's held items are not released, before its cancel's pages reach them");
        db.inTransaction(connection -> new dev.runner.item.CancelStore(db).cancelPage(connection, run.runId(), dev.runner.item.ItemStatus.QUEUED, null, 1_000));
        assertEquals(null, store.heldCounts(List.of(tenant)).get(tenant), "the cancel's page ends the held items with the rest");
    }

    /** When a UUIDv7 was made (its first 48 bits). */
    private static long createdMs(UUID id) {
        return id.getMostSignificantBits() >>> 16;
    }

    /** The dispatcher's part: reserve, send what is not held (here: remember it). */
    private static void send(BacklogHorizon horizon, List<ItemJob> jobs, List<ItemJob> sent) {
        Map<String, TenantSlot> slots = horizon.reserve(jobs);
        jobs.stream().filter(job -> !slots.get(job.itemId().toString()).held()).forEach(sent::add);
    }

    private static RunRef openRun(String tenant) {
        RunJob job = new RunJob(UUID.randomUUID(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL, null);
        db.inTransaction(connection -> runs.insert(connection, job, RunStatus.RUNNING, null));
        return new RunRef(job.runId(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL);
    }

    private static List<ItemJob> insert(RunRef run, int size) {
        return items.insert(run, IntStream.range(0, size)
                .mapToObj(i -> new ItemStore.NewItem("e-" + i, JsonNodeFactory.instance.objectNode())).toList());
    }
}
