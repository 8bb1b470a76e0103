package dev.runner.ordering;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.cost.CostTracker;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The record order's statements on the real Postgres: the claim's wait, a release nobody sent, and the race of an end and a claim. */
class RecordOrderIT {

    private static final Duration LEASE = Duration.ofMinutes(2);

    private static TestStack stack;
    private static Database db;
    private static ItemStore items;
    private static RunStore runs;
    private static RecordOrder order;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 8, CostTracker.NONE);
        items = new ItemStore(db, Clock.systemUTC());
        runs = new RunStore(db);
        order = new RecordOrder(items, db, RecordOrder.RECHECK);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    /**
     * A later item waits while the earlier is open, out of the overdue sweep's way; once the earlier ended by a path that
     * released nothing (a cancel), the later one's next claim (the sweep's re-send, five minutes on) lets it go.
     */
    @Test
    void aWaitingItemWhoseEarlierOneWasCancelledGoesAtItsNextClaim() throws Exception {
        String tenant = "t-" + UUID.randomUUID();
        RunRef first = run(tenant);
        UUID earlier = item(first, "c-1");
        UUID later = item(run(tenant), "c-1");

        ItemStore.Claim claim = order.claim(List.of(later), List.of(later), LEASE);
        assertEquals(Set.of(later), claim.waiting());
        assertTrue(claim.claimed().isEmpty());
        assertEquals("queued", status(later));
        assertFalse(items.overdue(Duration.ZERO, List.of(Trigger.MANUAL), 100).stream().anyMatch(job -> job.itemId().equals(later)),
                "a waiting item is not the overdue sweep's until its recheck");

        db.inTransaction(connection -> new dev.runner.item.CancelStore(db).cancelPage(connection, first.runId(), ItemStatus.QUEUED, null, 10));
        assertEquals("cancelled", status(earlier));
        ItemStore.Claim again = order.claim(List.of(later), List.of(later), LEASE);
        assertEquals(Set.of(later), again.claimed().keySet(), "no earlier item open: it goes");
        assertEquals(1, again.claimed().get(later).attempt(), "waiting spent no attempt");
    }

    /**
     * The race the advisory locks close: the earlier item's end recorded and the later item's claim at the same moment.
     * Without them each can miss the other's uncommitted row, and the later item waits with no release coming. Every
     * round ends with the later one claimed, or released by the record to be sent.
     */
    @Test
    void anEndAndALaterClaimAtOnceNeverLeaveTheLaterWaiting() throws Exception {
        String tenant = "t-" + UUID.randomUUID();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 40; round++) {
                String record = "r-" + round;
                RunRef run = run(tenant);
                UUID earlier = item(run, record);
                UUID later = item(run(tenant), record);
                assertEquals(Set.of(earlier), order.claim(List.of(earlier), List.of(earlier), LEASE).claimed().keySet());

                CyclicBarrier start = new CyclicBarrier(2);
                Future<RecordOrder.Recorded> ended = pool.submit(() -> {
                    start.await();
                    return order.record(List.of(new ItemStore.Result.Succeeded(earlier)), List.of(run.runId()), List.of(earlier));
                });
                Future<ItemStore.Claim> claimed = pool.submit(() -> {
                    start.await();
                    return order.claim(List.of(later), List.of(later), LEASE);
                });
                boolean released = ended.get().released().stream().anyMatch(job -> job.itemId().equals(later));
                ItemStore.Claim claim = claimed.get();
                boolean went = claim.claimed().containsKey(later);
                assertTrue(went ^ released, "round " + round + ": claimed " + went + ", released " + released);
                if (released) {
                    assertEquals(Set.of(later), order.claim(List.of(later), List.of(later), LEASE).claimed().keySet(),
                            "round " + round + ": the released item's message claims it");
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A record's item handed to the DLQ has ended for its record: the next one is released by that record statement. */
    @Test
    void anItemHandedToTheDlqReleasesItsRecord() {
        String tenant = "t-" + UUID.randomUUID();
        RunRef run = run(tenant);
        UUID earlier = item(run, "d-1");
        UUID later = item(run(tenant), "d-1");
        order.claim(List.of(earlier), List.of(earlier), LEASE);
        assertEquals(Set.of(later), order.claim(List.of(later), List.of(later), LEASE).waiting());

        RecordOrder.Recorded recorded = order.record(List.of(new ItemStore.Result.HandedToDlq(earlier, "422", false)), List.of(),
                List.of(earlier));
        assertEquals(List.of(later), recorded.released().stream().map(ItemJob::itemId).toList());
    }

    private static RunRef run(String tenant) {
        RunJob job = new RunJob(UUID.randomUUID(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL, null);
        db.inTransaction(connection -> runs.insert(connection, job, RunStatus.RUNNING, null));
        return new RunRef(job.runId(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL);
    }

    /** One item of a run of an ordered handler, as the fan-out stores it. */
    private static UUID item(RunRef run, String externalId) {
        return items.insert(run, List.of(new ItemStore.NewItem(externalId, JsonNodeFactory.instance.objectNode())), true)
                .getFirst().itemId();
    }

    private static String status(UUID itemId) {
        return db.queryOne("select status from execution_items where item_id = ?", row -> row.getString(1), itemId).orElseThrow();
    }
}
