package dev.runner.store;

import dev.runner.cost.CostTracker;
import dev.runner.item.ItemStore;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The functions' sessions never hold a named prepared statement: RDS Proxy pins a session that
 * does to one database connection for good, and the proxy's multiplexing is what lets a thousand
 * Lambda environments share a database's connections. pgjdbc names a statement once it has run five
 * times on a connection unless told otherwise; here the same statements run far more often than
 * that on a pool of one connection, and the session is asked what it holds.
 */
class UnnamedStatementsIT {

    private static TestStack stack;
    private static Database db;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 1, CostTracker.NONE);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void theHotStatementsRunManyTimesLeaveNoNamedPreparedStatementInTheSession() {
        ItemStore items = new ItemStore(db, java.time.Clock.systemUTC());
        for (int i = 0; i < 20; i++) {
            items.claim(List.of(UUID.randomUUID()), Duration.ofSeconds(120));
            db.query("select count(*) from runs where run_id = ?", row -> row.getLong(1), UUID.randomUUID());
        }

        assertEquals(List.of(0L), db.query("select count(*) from pg_prepared_statements", row -> row.getLong(1)));
    }
}
