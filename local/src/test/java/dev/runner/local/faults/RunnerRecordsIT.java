package dev.runner.local.faults;

import dev.runner.config.RunnerConfig;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.embedded.TestServers;
import dev.runner.item.ItemStore;
import dev.runner.store.Database;
import dev.runner.cost.CostTracker;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fault run's instrument for "marked succeeded twice", on real Postgres: it must see a second
 * mark, or the fault run's zero would prove nothing.
 */
class RunnerRecordsIT {

    private static EmbeddedServers.Endpoints endpoints;

    @BeforeAll
    static void migrate() {
        endpoints = TestServers.get();
        Database.migrate(new RunnerConfig.Database(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword()));
    }

    @Test
    void seesAnItemMarkedSucceededTwiceOrWrittenAfterItsSuccess() throws SQLException {
        String tenant = "audit-" + UUID.randomUUID();
        UUID once = UUID.randomUUID();
        UUID twice = UUID.randomUUID();
        UUID reopened = UUID.randomUUID();
        try (var records = new RunnerRecords(endpoints, tenant); Connection db = connect()) {
            records.installAudit();
            insertProcessing(db, tenant, List.of(once, twice, reopened));

            succeed(db, once);
            succeed(db, twice);
            succeed(db, twice);
            succeed(db, reopened);
            db.createStatement().execute("update execution_items set status = 'queued' where item_id = '" + reopened + "'");

            assertEquals(2, records.markedSucceededTwice(), "the item marked twice and the one written after its success");
        }
    }

    @Test
    void runnersOwnRecordOfASuccessCannotMarkItTwice() throws SQLException {
        String tenant = "audit-" + UUID.randomUUID();
        UUID item = UUID.randomUUID();
        var config = new RunnerConfig.Database(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
        try (var records = new RunnerRecords(endpoints, tenant); Connection db = connect();
             var runner = Database.connect(config, 2, CostTracker.NONE)) {
            records.installAudit();
            insertProcessing(db, tenant, List.of(item));
            var store = new ItemStore(runner, Clock.systemUTC());

            // Two workers recording the same success: a late one after a lease ran out, a redelivery.
            store.record(List.of(new ItemStore.Result.Succeeded(item)));
            store.record(List.of(new ItemStore.Result.Succeeded(item)));

            assertEquals(0, records.markedSucceededTwice());
        }
    }

    private static void insertProcessing(Connection db, String tenant, List<UUID> items) throws SQLException {
        UUID run = UUID.randomUUID();
        try (var insertRun = db.prepareStatement("""
                insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status)
                values (?, ?, 'audit', 'audit', 'inbound', 'manual', 2, 'running')
                """)) {
            insertRun.setObject(1, run);
            insertRun.setString(2, tenant);
            insertRun.executeUpdate();
        }
        for (UUID item : items) {
            try (var insertItem = db.prepareStatement("""
                    insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status, attempts)
                    values (?, ?, ?, 'audit', 'audit', ?, 'processing', 1)
                    """)) {
                insertItem.setObject(1, item);
                insertItem.setObject(2, run);
                insertItem.setString(3, tenant);
                insertItem.setString(4, item.toString());
                insertItem.executeUpdate();
            }
        }
    }

    private static void succeed(Connection db, UUID item) throws SQLException {
        try (var update = db.prepareStatement("update execution_items set status = 'succeeded', finished_at = now() where item_id = ?")) {
            update.setObject(1, item);
            update.executeUpdate();
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
    }
}
