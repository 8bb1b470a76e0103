package dev.runner.retention;

import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The retention and index migrations applied to a database at today's schema (V1–V7) that holds data: rows kept, the
 * new indexes valid, the dropped ones gone, and retention working on rows written before it existed.
 */
class RetentionMigrationIT {

    @Test
    void migratesTodaysSchemaWithItsDataOnline() throws SQLException {
        try (TestStack stack = TestStack.create(Map.of())) {
            RunnerConfig.Database server = stack.config().database();
            String name = "migration_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            try (var admin = DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password());
                 var statement = admin.createStatement()) {
                statement.execute("create database " + name);
            }
            var config = new RunnerConfig.Database(server.jdbcUrl().replaceFirst("/[^/?]+(\\?|$)", "/" + name + "$1"),
                    server.user(), server.password());
            Database.flyway(config).target("7").load().migrate();

            try (Database db = Database.connect(config, 2, CostTracker.NONE)) {
                UUID old = UUID.randomUUID();
                UUID live = UUID.randomUUID();
                db.update("""
                        insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, finished_at)
                        values (?, 't', 'crm', 'h', 'inbound', 'manual', 1, 'completed', now() - interval '40 days'),
                               (?, 't', 'crm', 'h', 'inbound', 'manual', 1, 'running', null)
                        """, old, live);
                db.update("""
                        insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status, finished_at)
                        select gen_random_uuid(), r, 't', 'crm', 'h', 'e-' || g, case when r = ? then 'succeeded' else 'queued' end, now()
                        from unnest(array[?, ?]::uuid[]) r, generate_series(1, 1000) g
                        """, old, old, live);
                db.update("insert into delivery_ids (tenant_id, integration_key, delivery_id, received_at) values ('t', 'crm', 'd-1', now() - interval '2 days')");
                db.update("insert into dead_letters (source, reason, body) values ('test', 'test', '{}')");

                Database.migrate(config);

                assertEquals(List.of(Database.flyway(config).load().info().current().getVersion().getVersion()),
                        db.query("select version from flyway_schema_history where success and version is not null"
                                + " order by installed_rank desc limit 1", row -> row.getString(1)), "every migration applied");
                assertEquals(2000L, count(db, "select count(*) from execution_items"), "items kept");
                assertEquals(2L, count(db, "select count(*) from runs"), "runs kept");
                assertEquals(1L, count(db, "select count(*) from dead_letters"));
                assertEquals(0L, count(db, "select count(*) from pg_index where not indisvalid"), "every index built whole");
                for (String index : List.of("runs_finished", "runs_kept_dead", "dead_letters_received", "delivery_ids_kept_until",
                        "delivery_ids_unbounded", "execution_items_open_retried", "execution_items_finished")) {
                    assertEquals(1L, count(db, "select count(*) from pg_indexes where indexname = '" + index + "'"), index);
                }
                for (String index : List.of("delivery_ids_received", "execution_items_open", "execution_items_succeeded")) {
                    assertEquals(0L, count(db, "select count(*) from pg_indexes where indexname = '" + index + "'"), index + " dropped");
                }

                new RetentionStore(db, java.time.Clock.systemUTC())
                        .trim(new RunnerConfig.Retention(Duration.ofDays(30), Duration.ofDays(90)), 300, Duration.ofSeconds(30));
                new dev.runner.delivery.DeliveryStore(db).purge(Duration.ofDays(1), 100);
                assertEquals(1000L, count(db, "select count(*) from execution_items"), "the expired run's items gone, the open run's kept");
                assertEquals(List.of(live), db.query("select run_id from runs", row -> row.getObject(1, UUID.class)));
                assertEquals(0L, count(db, "select count(*) from delivery_ids"), "a delivery id from before, past the dedup window");
            }
            try (var admin = DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password());
                 var statement = admin.createStatement()) {
                statement.execute("drop database " + name + " with (force)");
            }
        }
    }

    private static long count(Database db, String sql) {
        return db.query(sql, row -> row.getLong(1)).getFirst();
    }
}
