package dev.runner.store;

import dev.runner.cost.CostTracker;
import dev.runner.log.Log;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a log line carries of a statement Postgres refuses: its SQL state and the constraint it
 * names, never the row's values, which Postgres's Detail quotes ("Key (…)=(…) already exists",
 * "Failing row contains (…)"). Unique-key and check violations on the real Postgres, logged as
 * Runner logs a failure (the exception as a field, its stack trace with it), read back from the
 * log's stream.
 */
class StoreErrorLogIT {

    private static final Log LOG = Log.of(StoreErrorLogIT.class);
    private static final String INSERT_RUN = """
            insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, schedule_fire_key)
            values (?, 't-log', 'crm-log', 'leads', 'inbound', 'schedule', 5, ?, ?)""";

    private static TestStack stack;
    private static Database db;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 2, CostTracker.NONE);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void aUniqueKeyViolationIsLoggedWithItsStateAndConstraintNotTheRow() {
        String value = "row-value-" + UUID.randomUUID();
        db.update(INSERT_RUN, UUID.randomUUID(), "queued", value);

        String line = logged(() -> db.update(INSERT_RUN, UUID.randomUUID(), "queued", value));

        assertTrue(line.contains("postgres 23505 constraint runs_schedule_fire_key_key table runs"), line);
        assertFalse(line.contains(value) || line.contains("Detail"), line);
    }

    @Test
    void aCheckViolationIsLoggedWithItsStateAndConstraintNotTheRow() {
        String value = "row-value-" + UUID.randomUUID();

        String line = logged(() -> db.update(INSERT_RUN, UUID.randomUUID(), "status-" + value, value));

        assertTrue(line.contains("postgres 23514 constraint runs_status_check table runs"), line);
        assertFalse(line.contains(value) || line.contains("Failing row"), line);
    }

    /** A failed batch entry's exception would quote its statement with the parameters bound. */
    @Test
    void aBatchEntryViolatingAUniqueKeyIsLoggedWithoutItsStatementsParameters() {
        String value = "row-value-" + UUID.randomUUID();

        String line = logged(() -> {
            try (var connection = db.dataSource().getConnection(); PreparedStatement insert = connection.prepareStatement(INSERT_RUN)) {
                for (int i = 0; i < 2; i++) {
                    insert.setObject(1, UUID.randomUUID());
                    insert.setString(2, "queued");
                    insert.setString(3, value);
                    insert.addBatch();
                }
                insert.executeBatch();
            } catch (SQLException e) {
                throw new Database.StoreException(INSERT_RUN, e);
            }
        });

        assertTrue(line.contains("postgres 23505 constraint runs_schedule_fire_key_key"), line);
        assertFalse(line.contains(value), line);
    }

    /** The statement's StoreException, logged; what the log's stream received. */
    private static String logged(Runnable statement) {
        var failure = assertThrows(Database.StoreException.class, statement::run);
        var captured = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            LOG.error("statement failed", "error", failure);
        } finally {
            System.setErr(original);
        }
        // The embedded Postgres writes its own server log here too (in AWS, RDS's log, not the functions').
        String line = captured.toString(StandardCharsets.UTF_8).lines()
                .filter(text -> !text.contains("io.zonky.test.db.postgres")).collect(Collectors.joining("\n"));
        assertTrue(line.contains("statement failed") && line.contains("StoreException"), "nothing logged: " + line);
        return line;
    }
}
