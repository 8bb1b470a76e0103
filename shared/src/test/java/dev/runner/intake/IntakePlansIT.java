package dev.runner.intake;

import dev.runner.config.RunnerConfig;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.sql.DriverManager;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plans the event path's functions run with, read from Postgres itself (auto_explain, its plans sent to this
 * session): on a new database, whose statistics say every table is empty, each statement finds its rows by key, never
 * by scanning a table, because the plan made now is the one the connection keeps (db/migration/V12__event_intake.sql).
 */
class IntakePlansIT {

    private static final List<String> HOT_TABLES = List.of("execution_items", "runs", "delivery_ids", "pending_sends");

    @Test
    void onANewDatabaseEveryStatementOfTheEventPathFindsItsRowsByKey() throws Exception {
        try (TestStack stack = TestStack.create(Map.of())) {
            RunnerConfig.Database server = stack.config().database();
            String name = "plans_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            try (var admin = DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password());
                 var statement = admin.createStatement()) {
                statement.execute("create database " + name);
            }
            var config = new RunnerConfig.Database(server.jdbcUrl().replaceFirst("/[^/?]+(\\?|$)", "/" + name + "$1"),
                    server.user(), server.password());
            Database.migrate(config);
            List<String> plans = new ArrayList<>();
            UUID run = UUID.randomUUID();
            UUID item = UUID.randomUUID();
            // The calls as the stores send them, on one session whose notices (auto_explain's plans) are read back.
            try (var session = DriverManager.getConnection(config.jdbcUrl() + "&prepareThreshold=0", config.user(), config.password());
                 var statement = session.createStatement()) {
                for (String setting : List.of("load 'auto_explain'", "set auto_explain.log_min_duration = 0",
                        "set auto_explain.log_nested_statements = on", "set auto_explain.log_level = notice")) {
                    statement.execute(setting);
                }
                for (String call : List.of(
                        "select * from runner_accept_deliveries(array['t'], array['crm'], array['msg_1'], array['%1$s']::uuid[],"
                                + " array[86400]::float8[], array['%1$s']::uuid[], array['h'], array['inbound'], array['webhook'], array[1],"
                                + " array['%2$s']::uuid[], array[1], array['e-1'], array['{}'], gen_random_uuid(), array[gen_random_uuid()])",
                        "select * from runner_claim_items(array['%2$s']::uuid[], 120)",
                        "select * from runner_record_and_complete(array['%2$s']::uuid[], array['succeeded'], array[null]::text[], array[0],"
                                + " array[false], array[null]::int[], array['%1$s']::uuid[])")) {
                    try (var rows = statement.executeQuery(call.formatted(run, item))) {
                        while (rows.next()) {
                            // read to the end: the notices arrive with the rows
                        }
                    }
                    collect(statement.getWarnings(), plans);
                    statement.clearWarnings();
                }
                try (var rows = statement.executeQuery("select status from runs where run_id = '" + run + "'")) {
                    assertTrue(rows.next());
                    assertEquals("completed", rows.getString(1), "the calls did their work");
                }
            }
            try (var admin = DriverManager.getConnection(server.jdbcUrl(), server.user(), server.password());
                 var statement = admin.createStatement()) {
                statement.execute("drop database " + name + " with (force)");
            }
            String all = String.join("\n", plans);
            assertTrue(plans.size() >= 8, "the nested statements' plans were read: " + all);
            for (String table : HOT_TABLES) {
                assertFalse(all.contains("Seq Scan on " + table + " "), "a table scanned:\n" + all);
            }
        }
    }

    private static void collect(SQLWarning warning, List<String> into) {
        for (SQLWarning w = warning; w != null; w = w.getNextWarning()) {
            into.add(w.getMessage());
        }
    }
}
