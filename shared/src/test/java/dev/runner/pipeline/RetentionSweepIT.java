package dev.runner.pipeline;

import dev.runner.cost.CostTracker;
import dev.runner.delivery.DeliveryStore;
import dev.runner.retention.RetentionStore;
import dev.runner.run.RunRequestStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Retention keeps pace with the event intake on the real Postgres: one tick's sweep forgets every delivery past its
 * window and deletes every run past retention, however many more than one batch arrived since the last tick (a tick
 * used to forget 10,000 deliveries at most, 167 a second: the event intake fills them faster).
 */
class RetentionSweepIT {

    private static final int BATCH = 10_000;

    private static TestStack stack;
    private static Database db;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 4, CostTracker.NONE);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void oneTickForgetsAndDeletesMoreThanABatchOfDeliveriesAndOneItemRuns() {
        String tenant = "sweep-" + UUID.randomUUID();
        int deliveries = 2 * BATCH + 5_000;
        int runs = BATCH + 2_000;
        db.update("""
                insert into delivery_ids (tenant_id, integration_key, delivery_id, run_id, received_at, kept_until)
                select ?, 'crm', 'd-' || g, null, now() - interval '2 days', now() - interval '1 day' from generate_series(1, ?) g
                """, tenant, deliveries);
        db.update("""
                insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, finished_at)
                select gen_random_uuid(), ?, 'crm', 'h', 'inbound', 'webhook', 1, 'completed', now() - interval '31 days'
                from generate_series(1, ?)
                """, tenant, runs);
        db.update("""
                insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status, finished_at)
                select gen_random_uuid(), run_id, tenant_id, 'crm', 'h', 'e-1', 'succeeded', finished_at from runs where tenant_id = ?
                """, tenant);
        RetentionSweep sweep = new RetentionSweep(stack.config(), new DeliveryStore(db),
                new RunRequestStore(db, Duration.ofDays(1)), new RetentionStore(db, Clock.systemUTC()), Clock.systemUTC());

        int forgotten = sweep.forget();
        long trimmed = sweep.trim();

        assertEquals(0L, count("select count(*) from delivery_ids where tenant_id = ?", tenant), "forgotten: " + forgotten);
        assertEquals(0L, count("select count(*) from runs where tenant_id = ?", tenant), "trimmed: " + trimmed);
        assertEquals(0L, count("select count(*) from execution_items where tenant_id = ?", tenant));
    }

    private static long count(String sql, String tenant) {
        return db.query(sql, row -> row.getLong(1), tenant).getFirst();
    }
}
