package dev.runner.store;

import dev.runner.cost.CostMeter;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A statement Postgres aborts as a deadlock's victim is run again and succeeds; one refused for
 * any other reason is not. The deadlock is a real one on the embedded Postgres, made in a known
 * order with advisory locks: the statement under test waits first, so its own deadlock check
 * (after deadlock_timeout) finds the cycle and Postgres aborts it, not the other side.
 */
class DeadlockRetryIT {

    private static TestStack stack;
    private static Database db;
    private static CostMeter meter;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        meter = new CostMeter();
        db = Database.connect(stack.config().database(), 3, meter);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void aStatementThatLosesADeadlockIsRunAgainAndSucceeds() throws Exception {
        long first = 1_000 + (System.nanoTime() & 0xffff);
        long second = first + 1;
        // Threads of their own: the common pool may have a single worker, which the waiting statement would hold.
        try (var threads = Executors.newFixedThreadPool(2); Connection other = db.dataSource().getConnection()) {
            other.setAutoCommit(false);
            lock(other, second);
            long before = meter.snapshot().sqlStatements();

            // Takes the first lock, then waits for the second, which the other transaction holds.
            CompletableFuture<List<Integer>> statement = CompletableFuture.supplyAsync(() -> db.query(
                    "select 1 from (select pg_advisory_xact_lock(?), pg_advisory_xact_lock(?)) locks",
                    row -> row.getInt(1), first, second), threads);
            awaitWaitingFor(second);
            // The other side now waits for the first lock: a cycle, which the statement's backend finds first.
            CompletableFuture<Void> otherSide = CompletableFuture.runAsync(() -> {
                try {
                    lock(other, first);
                    other.commit();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }, threads);

            otherSide.get(30, TimeUnit.SECONDS);
            assertEquals(List.of(1), statement.get(30, TimeUnit.SECONDS));
            assertEquals(2, meter.snapshot().sqlStatements() - before, "sent once, aborted, sent again");
        }
    }

    @Test
    void aStatementRefusedForAnotherReasonIsNotRunAgain() {
        long before = meter.snapshot().sqlStatements();

        var refused = assertThrows(Database.StoreException.class, () -> db.query("select 1 / (? - 1)", row -> row.getInt(1), 1));

        assertEquals(1, meter.snapshot().sqlStatements() - before, refused.getMessage());
    }

    private static void lock(Connection connection, long key) throws SQLException {
        try (var statement = connection.prepareStatement("select pg_advisory_xact_lock(?)")) {
            statement.setLong(1, key);
            statement.execute();
        }
    }

    /** Read past the meter, on a connection of its own, so the statements counted are the tested one's only. */
    private static void awaitWaitingFor(long key) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).until(() -> {
            try (Connection connection = db.dataSource().getConnection();
                 var statement = connection.prepareStatement(
                         "select 1 from pg_locks where locktype = 'advisory' and not granted and objid = ?")) {
                statement.setLong(1, key);
                try (var rows = statement.executeQuery()) {
                    return rows.next();
                }
            }
        });
    }
}
