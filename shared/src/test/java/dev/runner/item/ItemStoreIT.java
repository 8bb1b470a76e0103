package dev.runner.item;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.cost.CostTracker;
import dev.runner.integration.Direction;
import dev.runner.run.RunJob;
import dev.runner.run.RunRef;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The item store's statements that take "at most n rows", and a run's cancel as the claim sees it, on the real Postgres. */
class ItemStoreIT {

    private static TestStack stack;
    private static Database db;
    private static ItemStore items;
    private static ItemQueries queries;
    private static RedriveStore redrives;
    private static CancelStore cancels;
    private static RunStore runs;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 4, CostTracker.NONE);
        items = new ItemStore(db, Clock.systemUTC());
        queries = new ItemQueries(db);
        redrives = new RedriveStore(db);
        cancels = new CancelStore(db);
        runs = new RunStore(db);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    /** A redrive of n puts n dead items back to work, no more (ManagementApiIT once saw 3 take 5). */
    @Test
    void aRedriveTakesNoMoreDeadItemsThanItsLimit() {
        String tenant = "t-" + UUID.randomUUID();
        RunRef run = deadRun(tenant, 60);
        ItemFilter filter = new ItemFilter(tenant, null, null, null);

        for (int limit : new int[] {1, 3, 7, 20}) {
            long before = redrives.countDead(filter, null, Long.MAX_VALUE);
            List<ItemJob> redriven = db.inTransaction(connection -> redrives.redrivePage(connection, filter, null, null, null, limit)).jobs();
            assertEquals(limit, redriven.size(), "a redrive of " + limit);
            assertEquals(before - limit, redrives.countDead(filter, null, Long.MAX_VALUE), "dead items left after a redrive of " + limit);
            redriven.forEach(job -> assertEquals(run.runId(), job.runId()));
        }
    }

    /**
     * Cancel ends the items not yet called at once; one in flight finishes and is recorded, and the
     * message that brings it back later (a retry) finds it cancelled at its claim, not called. The
     * run next to it is not touched.
     */
    @Test
    void aCancelledRunsItemsAreNeverClaimedAgainAndItsNeighbourIsUntouched() {
        String tenant = "t-" + UUID.randomUUID();
        RunRef cancelled = openRun(tenant);
        RunRef neighbour = openRun(tenant);
        List<ItemJob> items4 = insert(cancelled, 4);
        List<ItemJob> others = insert(neighbour, 2);
        UUID succeeds = items4.get(0).itemId();
        UUID retries = items4.get(1).itemId();
        UUID waitsItsBackoff = items4.get(2).itemId();
        assertEquals(3, items.claim(List.of(succeeds, retries, waitsItsBackoff), LEASE).claimed().size());
        items.record(List.of(new ItemStore.Result.Retrying(waitsItsBackoff, "503", 0)));

        assertTrue(cancel(cancelled.runId()));
        assertFalse(cancel(cancelled.runId()), "a second cancel changes nothing");
        assertEquals(RunStatus.CANCELLED, runs.find(cancelled.runId()).orElseThrow().status());
        assertEquals(Map.of(ItemStatus.PROCESSING, 2L, ItemStatus.CANCELLED, 2L), queries.countByStatus(cancelled.runId()));

        // The calls in flight end and are recorded.
        items.record(List.of(new ItemStore.Result.Succeeded(succeeds), new ItemStore.Result.Retrying(retries, "503", 0)));
        assertEquals(Map.of(ItemStatus.SUCCEEDED, 1L, ItemStatus.RETRYING, 1L, ItemStatus.CANCELLED, 2L),
                queries.countByStatus(cancelled.runId()));
        // Messages that come later for any item of the run claim nothing and end what still waits.
        assertTrue(items.claim(items4.stream().map(ItemJob::itemId).toList(), LEASE).claimed().isEmpty());
        assertEquals(Map.of(ItemStatus.SUCCEEDED, 1L, ItemStatus.CANCELLED, 3L), queries.countByStatus(cancelled.runId()));

        assertEquals(RunStatus.RUNNING, runs.find(neighbour.runId()).orElseThrow().status());
        assertEquals(Map.of(ItemStatus.QUEUED, 2L), queries.countByStatus(neighbour.runId()));
        assertEquals(2, items.claim(others.stream().map(ItemJob::itemId).toList(), LEASE).claimed().size());
    }

    /** A cancelled run's dead items can be redriven: the run runs again, and ends cancelled again when they have. */
    @Test
    void aCancelledRunsDeadItemsRedriveAndItEndsCancelledAgain() {
        String tenant = "t-" + UUID.randomUUID();
        RunRef run = openRun(tenant);
        List<ItemJob> inserted = insert(run, 3);
        UUID dying = inserted.get(0).itemId();
        kill(List.of(dying));
        assertTrue(cancel(run.runId()));

        List<ItemJob> redriven = redrive(run.runId());
        assertEquals(List.of(dying), redriven.stream().map(ItemJob::itemId).toList());
        assertEquals(RunStatus.RUNNING, runs.find(run.runId()).orElseThrow().status());
        assertEquals(1, items.claim(List.of(dying), LEASE).claimed().size(), "a redriven item of a cancelled run is called");
        items.record(List.of(new ItemStore.Result.Succeeded(dying)));
        assertEquals(List.of(run.runId()), runs.completeIfDone(List.of(run.runId())));
        assertEquals(RunStatus.CANCELLED, runs.find(run.runId()).orElseThrow().status());
        assertEquals(Map.of(ItemStatus.SUCCEEDED, 1L, ItemStatus.CANCELLED, 2L), queries.countByStatus(run.runId()));
    }

    /**
     * A run cancelled while its fetch was under way never saw the rest of its handler's items: redriven, its
     * dead ones succeed and it ends again, cancelled, though none of its items reads cancelled.
     */
    @Test
    void aRunCancelledMidFetchEndsCancelledAfterItsRedrivenItemsSucceed() {
        RunJob job = new RunJob(UUID.randomUUID(), "t-" + UUID.randomUUID(), "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL, null);
        db.inTransaction(connection -> runs.insert(connection, job, RunStatus.FETCHING, null));
        RunRef run = new RunRef(job.runId(), job.tenantId(), "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL);
        UUID item = insert(run, 1).getFirst().itemId();
        kill(List.of(item));
        assertTrue(cancel(run.runId()));
        assertEquals(Map.of(ItemStatus.DEAD, 1L), queries.countByStatus(run.runId()), "no item was left to cancel");

        redrive(run.runId());
        items.claim(List.of(item), LEASE);
        items.record(List.of(new ItemStore.Result.Succeeded(item)));
        assertEquals(List.of(run.runId()), runs.completeIfDone(List.of(run.runId())));
        assertEquals(RunStatus.CANCELLED, runs.find(run.runId()).orElseThrow().status(), "its fetch never ended: not all its work was done");
    }

    /**
     * A worker ends a run's last live item while its dead items are being redriven: the run stays open for them. The
     * worker's completion waits for the redrive's lock on the run and then sees the redriven items queued; were it to
     * look with a snapshot taken before the redrive committed, it would see them dead and end the run over them, and
     * their success would never complete it.
     */
    @Test
    void aRunEndedWhileItsDeadItemsAreRedrivenStaysOpenForThem() throws Exception {
        RunRef run = openRun("t-" + UUID.randomUUID());
        List<UUID> ids = insert(run, 3).stream().map(ItemJob::itemId).toList();
        UUID live = ids.get(0);
        kill(ids.subList(1, 3));
        items.claim(List.of(live), LEASE);
        items.record(List.of(new ItemStore.Result.Succeeded(live)));

        CountDownLatch redriveWritten = new CountDownLatch(1);
        CountDownLatch commitRedrive = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<List<ItemJob>> redrive = threads.submit(() -> db.inTransaction(connection -> {
                List<ItemJob> jobs = redrives.redrivePage(connection, new ItemFilter(null, null, null, run.runId()), null, null, null, 1000).jobs();
                runs.reopen(connection, Set.of(run.runId()));
                redriveWritten.countDown();
                await(commitRedrive);
                return jobs;
            }));
            assertTrue(redriveWritten.await(30, TimeUnit.SECONDS));
            Future<List<UUID>> completion = threads.submit(() -> runs.completeIfDone(List.of(run.runId())));
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> completion.isDone() || waitsForALock("runner_complete_runs"));
            commitRedrive.countDown();
            assertEquals(2, redrive.get(30, TimeUnit.SECONDS).size());
            assertEquals(List.of(), completion.get(30, TimeUnit.SECONDS), "the redriven items are open");
        } finally {
            commitRedrive.countDown();
            threads.shutdownNow();
        }
        assertEquals(RunStatus.RUNNING, runs.find(run.runId()).orElseThrow().status());

        items.claim(ids.subList(1, 3), LEASE);
        items.record(ids.subList(1, 3).stream().<ItemStore.Result>map(ItemStore.Result.Succeeded::new).toList());
        assertEquals(List.of(run.runId()), runs.completeIfDone(List.of(run.runId())));
        assertEquals(RunStatus.COMPLETED, runs.find(run.runId()).orElseThrow().status());
    }

    /**
     * A dead letter is the end only of an item handed to the DLQ, parked, or out of attempts: a copy that comes back
     * after the item was redriven leaves it alone whatever it is doing now (waiting, or in a call, which then decides),
     * and one for an item whose worker stopped mid-call with attempts left sends it back to work.
     */
    @Test
    void aDeadLetterThatComesBackAfterARedriveLeavesTheRedrivenItemAlone() {
        RunRef run = openRun("t-" + UUID.randomUUID());
        UUID item = insert(run, 1).getFirst().itemId();
        kill(List.of(item));
        assertEquals(Map.of(ItemStatus.DEAD, 1L), queries.countByStatus(run.runId()));
        redrive(run.runId());

        ItemStore.Marked waiting = items.markDead(List.of(new ItemStore.Dead(item, "late copy")), LEASE, MAX_ATTEMPTS);
        assertEquals(List.of(), waiting.runsOfDead());
        assertEquals(Map.of(ItemStatus.QUEUED, 1L), queries.countByStatus(run.runId()), "the redriven item waits for its message");

        assertEquals(1, items.claim(List.of(item), LEASE).claimed().size());
        ItemStore.Marked inACall = items.markDead(List.of(new ItemStore.Dead(item, "late copy")), LEASE, MAX_ATTEMPTS);
        assertEquals(Set.of(item), inACall.inFlight(), "its call decides; the dead letter is looked at again later");
        assertEquals(Map.of(ItemStatus.PROCESSING, 1L), queries.countByStatus(run.runId()));
        items.record(List.of(new ItemStore.Result.Succeeded(item)));
        assertEquals(List.of(), items.markDead(List.of(new ItemStore.Dead(item, "late copy")), LEASE, MAX_ATTEMPTS).runsOfDead());
        assertEquals(Map.of(ItemStatus.SUCCEEDED, 1L), queries.countByStatus(run.runId()));
    }

    @Test
    void aDeadLetterKillsOnlyAnItemHandedOffParkedOrOutOfAttempts() {
        RunRef run = openRun("t-" + UUID.randomUUID());
        List<UUID> ids = insert(run, 5).stream().map(ItemJob::itemId).toList();
        UUID handedOff = ids.get(0);
        UUID parked = ids.get(1);
        UUID stoppedOnItsLastAttempt = ids.get(2);
        UUID stoppedWithAttemptsLeft = ids.get(3);
        UUID waiting = ids.get(4);
        items.claim(List.of(handedOff, stoppedOnItsLastAttempt, stoppedWithAttemptsLeft), LEASE);
        items.record(List.of(new ItemStore.Result.HandedToDlq(handedOff, "422", false)));
        db.update("update execution_items set status = 'parked' where item_id = ?", parked);
        db.update("update execution_items set attempts = ? where item_id = ?", MAX_ATTEMPTS, stoppedOnItsLastAttempt);

        // A lease of zero: every claim made before this statement has run out, as a stopped worker's does.
        ItemStore.Marked marked = items.markDead(ids.stream().map(id -> new ItemStore.Dead(id, null)).toList(), Duration.ZERO,
                MAX_ATTEMPTS);
        assertEquals(3, marked.runsOfDead().size());
        assertEquals(1, marked.backToWork());
        assertEquals(Map.of(ItemStatus.DEAD, 3L, ItemStatus.RETRYING, 1L, ItemStatus.QUEUED, 1L), queries.countByStatus(run.runId()));
        assertEquals(ItemStatus.RETRYING, statusOf(stoppedWithAttemptsLeft));
        assertEquals(ItemStatus.QUEUED, statusOf(waiting));
    }

    private static final Duration LEASE = Duration.ofMinutes(5);
    private static final int MAX_ATTEMPTS = 3;

    /** A run's dead items back to work and the run reopened, in one transaction, as a redrive's page does. */
    private static List<ItemJob> redrive(UUID runId) {
        return db.inTransaction(connection -> {
            List<ItemJob> jobs = redrives.redrivePage(connection, new ItemFilter(null, null, null, runId), null, null, null, 1000).jobs();
            runs.reopen(connection, jobs.stream().map(ItemJob::runId).collect(java.util.stream.Collectors.toSet()));
            return jobs;
        });
    }

    /** The run cancelled and its items not yet called ended, as a cancel and its pages do; false when it was not open. */
    private static boolean cancel(UUID runId) {
        return db.inTransaction(connection -> {
            if (!runs.cancel(connection, runId)) {
                return false;
            }
            for (ItemStatus status : CancelStore.CANCELLABLE) {
                cancels.cancelPage(connection, runId, status, null, 1000);
            }
            return true;
        });
    }

    /** Handed to the DLQ by a worker, then marked dead by the dead-letter function, as the pipeline does. */
    private static void kill(List<UUID> ids) {
        items.claim(ids, LEASE);
        items.record(ids.stream().<ItemStore.Result>map(id -> new ItemStore.Result.HandedToDlq(id, "422", false)).toList());
        assertEquals(ids.size(), items.markDead(ids.stream().map(id -> new ItemStore.Dead(id, "422")).toList(), LEASE, MAX_ATTEMPTS)
                .runsOfDead().size());
    }

    private static boolean waitsForALock(String statement) {
        return !db.query("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like ?", row -> 1,
                "%" + statement + "%").isEmpty();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static ItemStatus statusOf(UUID itemId) {
        return ItemStatus.fromWire(db.query("select status from execution_items where item_id = ?", row -> row.getString(1), itemId)
                .getFirst());
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

    private static RunRef deadRun(String tenant, int size) {
        RunRef run = openRun(tenant);
        kill(insert(run, size).stream().map(ItemJob::itemId).toList());
        return run;
    }
}
