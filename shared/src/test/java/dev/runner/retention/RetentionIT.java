package dev.runner.retention;

import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.delivery.DeliveryStore;
import dev.runner.integration.Direction;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Retention on the real Postgres: what goes, what stays, and how fast a batched delete goes beside live traffic. */
class RetentionIT {

    private static final RunnerConfig.Retention RETENTION = new RunnerConfig.Retention(Duration.ofDays(30), Duration.ofDays(90));

    private static TestStack stack;
    private static Database db;
    private static RetentionStore retention;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 4, CostTracker.NONE);
        retention = new RetentionStore(db, Clock.systemUTC());
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void finishedRunsPastRetentionGoWithTheirItemsWhileOpenRunsAndRecentDeadItemsStay() {
        String tenant = "ret-" + UUID.randomUUID();
        UUID expired = run(tenant, "completed", 40);
        items(expired, "succeeded", 5, null);
        UUID withDead = run(tenant, "completed_with_errors", 40);
        items(withDead, "succeeded", 3, null);
        items(withDead, "dead", 2, 40);
        UUID longDead = run(tenant, "completed_with_errors", 100);
        items(longDead, "dead", 2, 100);
        UUID open = run(tenant, "running", null);
        db.update("update runs set created_at = now() - interval '100 days' where run_id = ?", open);
        items(open, "succeeded", 2, null);
        items(open, "queued", 2, null);
        UUID recent = run(tenant, "completed", 10);
        items(recent, "succeeded", 2, null);
        UUID failedWithOpenItems = run(tenant, "failed", 40);
        items(failedWithOpenItems, "queued", 1, null);
        long oldLetter = deadLetter(100);
        long newLetter = deadLetter(10);

        RetentionStore.Trimmed trimmed = retention.trim(RETENTION, 3, Duration.ofSeconds(30));

        assertTrue(trimmed.items() >= 5 + 3 + 2, "items deleted: " + trimmed);
        assertEquals(Map.of(), itemsOf(expired), "an expired run's items");
        assertTrue(runGone(expired), "an expired run with nothing kept");
        assertEquals(Map.of("dead", 2L), itemsOf(withDead), "dead items are kept past their run's retention");
        assertNotNull(keptDeadAt(withDead), "a run kept for its dead items is marked, and leaves the runs to trim");
        assertTrue(runGone(longDead), "a run whose dead items are past their own retention");
        assertEquals(Map.of("succeeded", 2L, "queued", 2L), itemsOf(open), "an open run is never touched, whatever its age");
        assertEquals(Map.of("succeeded", 2L), itemsOf(recent), "a run within retention");
        assertEquals(Map.of("queued", 1L), itemsOf(failedWithOpenItems), "an item still open is never deleted");
        assertTrue(deadLetterGone(oldLetter), "a dead letter past retention");
        assertTrue(!deadLetterGone(newLetter), "a dead letter within retention");

        // 51 days later: the dead items are 91 days dead.
        db.update("update execution_items set dlq_at = dlq_at - interval '51 days' where run_id = ?", withDead);
        db.update("update runs set kept_dead_at = kept_dead_at - interval '51 days', finished_at = finished_at - interval '51 days'"
                + " where run_id = ?", withDead);
        retention.trim(RETENTION, 3, Duration.ofSeconds(30));
        assertEquals(Map.of(), itemsOf(withDead), "dead items once past their retention");
        assertTrue(runGone(withDead), "and their run with them");
        assertEquals(Map.of("succeeded", 2L, "queued", 2L), itemsOf(open));
    }

    @Test
    void aDeliveryIdIsKeptForItsOwnWindowAndOnesFromBeforeForTheDedupWindow() {
        DeliveryStore deliveries = new DeliveryStore(db);
        String tenant = "ret-" + UUID.randomUUID();
        assertTrue(offer(deliveries, tenant, "untimed", Duration.ofDays(30)));
        assertTrue(offer(deliveries, tenant, "timed", Duration.ofDays(1)));
        db.update("update delivery_ids set received_at = now() - interval '2 days', kept_until = kept_until - interval '2 days'"
                + " where tenant_id = ?", tenant);
        db.update("insert into delivery_ids (tenant_id, integration_key, delivery_id, received_at) values (?, 'crm', 'legacy', now() - interval '2 days')",
                tenant);

        deliveries.purge(Duration.ofDays(1), 10_000);

        assertEquals(Set.of("untimed"), Set.copyOf(db.query("select delivery_id from delivery_ids where tenant_id = ?",
                row -> row.getString(1), tenant)));
        assertTrue(!offer(deliveries, tenant, "untimed", Duration.ofDays(30)), "a capture replayed after the dedup window is still a repeat");
        assertTrue(offer(deliveries, tenant, "timed", Duration.ofDays(1)), "a delivery past its window is new again");
    }

    /** Offers one delivery of one item through the intake's statement; whether it was new. */
    static boolean offer(DeliveryStore deliveries, String tenant, String deliveryId, Duration kept) {
        UUID run = UUID.randomUUID();
        return deliveries.accept(List.of(new DeliveryStore.Offered(tenant, "crm", deliveryId, kept, run)),
                List.of(new DeliveryStore.NewRun(run, "h", Direction.INBOUND, Trigger.WEBHOOK)),
                List.of(new DeliveryStore.NewItem(UUID.randomUUID(), 0, "e-1", "{}")), UUID.randomUUID(), List.of()).getFirst().fresh();
    }

    /**
     * The rate a batched delete keeps (printed), beside a writer on the same tables whose every statement must get its
     * locks within a second: the delete takes row locks only, so nothing waits on it.
     */
    @Test
    void batchedDeletesKeepUpWithoutLongLocks() throws Exception {
        String tenant = "ret-" + UUID.randomUUID();
        int runs = 50;
        int perRun = Integer.getInteger("retention.itemsPerRun", 2_000);
        for (int i = 0; i < runs; i++) {
            items(run(tenant, "completed", 31), "succeeded", perRun, null);
        }
        UUID live = run(tenant, "running", null);
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong slowestWriteNanos = new AtomicLong();
        AtomicLong writes = new AtomicLong();
        Set<String> strongLocks = new ConcurrentSkipListSet<>();
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try (Connection connection = db.dataSource().getConnection(); var statement = connection.createStatement()) {
                statement.execute("set lock_timeout = '1s'");
                for (int n = 0; !done.get(); n++) {
                    long started = System.nanoTime();
                    statement.execute("insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id)"
                            + " values (gen_random_uuid(), '" + live + "', '" + tenant + "', 'crm', 'h', 'live-" + n + "')");
                    statement.execute("update execution_items set status = 'processing', updated_at = now()"
                            + " where run_id = '" + live + "' and external_id = 'live-" + n + "'");
                    slowestWriteNanos.accumulateAndGet(System.nanoTime() - started, Math::max);
                    writes.incrementAndGet();
                    try (var locks = statement.executeQuery("""
                            select c.relname || ' ' || l.mode from pg_locks l join pg_class c on c.oid = l.relation
                            where c.relname in ('runs', 'execution_items') and l.granted
                              and l.mode not in ('AccessShareLock', 'RowShareLock', 'RowExclusiveLock')
                              -- autovacuum, woken by the deletes, holds ShareUpdateExclusiveLock: not Runner's, and no writer waits on it
                              and l.pid not in (select pid from pg_stat_activity where backend_type = 'autovacuum worker')""")) {
                        while (locks.next()) {
                            strongLocks.add(locks.getString(1));
                        }
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });

        long started = System.nanoTime();
        RetentionStore.Trimmed trimmed = retention.trim(RETENTION, 10_000, Duration.ofMinutes(5));
        double seconds = (System.nanoTime() - started) / 1e9;
        done.set(true);
        writer.get();

        long expected = (long) runs * perRun;
        System.out.printf("retention: %d items and %d runs deleted in %.2f s = %.0f items/s (batches of 10,000); beside it %d writes,"
                        + " the slowest %.1f ms; locks stronger than row locks on runs/execution_items: %s%n",
                trimmed.items(), trimmed.runs(), seconds, trimmed.items() / seconds, writes.get(), slowestWriteNanos.get() / 1e6, strongLocks);
        assertTrue(trimmed.items() >= expected, "every expired item deleted: " + trimmed);
        assertEquals(Set.of(), strongLocks);
        assertEquals(0L, db.query("select count(*) from execution_items e join runs r using (run_id) where r.tenant_id = ? and r.run_id <> ?",
                row -> row.getLong(1), tenant, live).getFirst());
    }

    /** The questions whose indexes V10 dropped are still answered through an index, on a table with data. */
    @Test
    void theOpenItemsAndSuccessesQuestionsAreStillServedByIndexes() {
        String tenant = "ret-" + UUID.randomUUID();
        for (int i = 0; i < 20; i++) {
            UUID done = run(tenant, "completed", 2);
            items(done, "succeeded", 2_000, null);
            db.update("update execution_items set finished_at = now() - interval '2 days' + make_interval(secs => ?)"
                    + " where run_id = ?", i, done);
        }
        UUID open = run(tenant, "running", null);
        items(open, "queued", 100, null);
        db.update("analyze execution_items");
        Map<String, String> questions = Map.of(
                "is any item of the run open?", "select 1 from execution_items o where o.run_id = '" + open
                        + "' and o.status in ('queued', 'processing', 'retrying', 'parked')",
                "successes per minute", "select date_trunc('minute', finished_at), count(*) from execution_items"
                        + " where status = 'succeeded' and finished_at >= now() - interval '1 hour' group by 1",
                "open items that failed", "select status, history from execution_items"
                        + " where status not in ('succeeded', 'dead') and history <> '[]'::jsonb",
                "waiting items by tier", "select r.trigger, count(*) from execution_items e join runs r on r.run_id = e.run_id"
                        + " where e.status in ('queued', 'retrying') group by r.trigger");
        questions.forEach((question, sql) -> {
            String plan = String.join("\n", db.query("explain " + sql, row -> row.getString(1)));
            assertTrue(!plan.contains("Seq Scan on execution_items"), question + ":\n" + plan);
        });
    }

    private static UUID run(String tenant, String status, Integer finishedDaysAgo) {
        UUID runId = UUID.randomUUID();
        db.update("""
                insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, finished_at)
                values (?, ?, 'crm', 'h', 'inbound', 'manual', 1, ?, now() - make_interval(days => ?))
                """, runId, tenant, status, finishedDaysAgo);
        return runId;
    }

    private static void items(UUID runId, String status, int count, Integer deadDaysAgo) {
        db.update("""
                insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status,
                                             finished_at, dlq_at)
                select gen_random_uuid(), r.run_id, r.tenant_id, 'crm', 'h', ? || '-' || g, ?,
                       coalesce(r.finished_at, now()), now() - make_interval(days => ?)
                from runs r, generate_series(1, ?) g where r.run_id = ?
                """, status, status, deadDaysAgo, count, runId);
    }

    private static Map<String, Long> itemsOf(UUID runId) {
        Map<String, Long> counts = new java.util.HashMap<>();
        db.query("select status, count(*) from execution_items where run_id = ? group by status",
                row -> counts.put(row.getString(1), row.getLong(2)), runId);
        return counts;
    }

    private static boolean runGone(UUID runId) {
        return db.query("select 1 from runs where run_id = ?", row -> 1, runId).isEmpty();
    }

    private static Object keptDeadAt(UUID runId) {
        return db.query("select kept_dead_at from runs where run_id = ?", row -> row.getTimestamp(1), runId).getFirst();
    }

    private static long deadLetter(int daysAgo) {
        return db.query("""
                insert into dead_letters (source, reason, body, received_at) values ('test', 'test', '{}', now() - make_interval(days => ?))
                returning id
                """, row -> row.getLong(1), daysAgo).getFirst();
    }

    private static boolean deadLetterGone(long id) {
        return db.query("select 1 from dead_letters where id = ?", row -> 1, id).isEmpty();
    }
}
