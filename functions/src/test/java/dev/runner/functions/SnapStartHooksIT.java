package dev.runner.functions;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.runner.app.Runner;
import dev.runner.testing.TestStack;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a function's root does around a SnapStart snapshot, on real Redis and Postgres: at init the
 * connections open on their own threads; before the checkpoint the hooks wait for them and close
 * them (they would be dead after a restore), and load the classes listed for the function (what
 * is and is not initialised: {@link ClassPrimingTest}); after
 * the restore they open again. CRaC's JVM is not here: the test calls the hooks as Lambda's runtime
 * would (the cold-start bench's --snapstart checkpoints a real one with CRIU).
 */
class SnapStartHooksIT {

    private static volatile boolean primedClassInitialised;

    /** Listed in prime/SnapStartHooksIT.classes (test resources). */
    static final class PrimedAtTheCheckpoint {
        static {
            primedClassInitialised = true;
        }
    }

    private static TestStack stack;
    private static RedisClient observer;
    private static StatefulRedisConnection<String, String> watching;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        observer = RedisClient.create(stack.config().redisUrl());
        watching = observer.connect();
    }

    @AfterAll
    static void stop() {
        watching.close();
        observer.shutdown();
        stack.close();
    }

    @Test
    void theCheckpointWaitsForTheConnectionsOpenedAndThePrimingStartedAtInitClosesTheConnectionsAndTheRestoreOpensThemAgain() throws Exception {
        try (Runner root = new Runner(stack.config(), Clock.systemUTC())) {
            long redisClientsBefore = redisClients();
            HikariPoolMXBean pool = ((HikariDataSource) root.database().dataSource()).getHikariPoolMXBean();

            CountDownLatch primingMayEnd = new CountDownLatch(1);
            AtomicBoolean primed = new AtomicBoolean();
            SnapStartHooks hooks = SnapStartHooks.openAndRegister(root, SnapStartHooksIT.class, Set.of(Runner.Connection.DATABASE, Runner.Connection.REDIS), () -> {
                try {
                    primingMayEnd.await();
                    primed.set(true);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.getTotalConnections() == 1 && redisClients() == redisClientsBefore + 1);

            // Priming still running when the checkpoint comes: it ends 200 ms later, and the checkpoint must wait for it.
            Thread.ofVirtual().start(() -> {
                LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
                primingMayEnd.countDown();
            });
            assertFalse(primedClassInitialised, "the listed classes wait for the checkpoint");
            hooks.beforeCheckpoint(null);
            assertTrue(primed.get(), "the checkpoint waited for the priming started at init");
            assertTrue(primedClassInitialised, "the checkpoint loaded and initialised the function's listed classes");
            await().atMost(Duration.ofSeconds(5)).until(() -> pool.getTotalConnections() == 0 && redisClients() == redisClientsBefore);

            hooks.afterRestore(null);
            await().atMost(Duration.ofSeconds(10)).until(() -> pool.getTotalConnections() == 1 && redisClients() == redisClientsBefore + 1);
            assertEquals(1, root.database().query("select 1", row -> row.getInt(1)).getFirst(), "Postgres answers after the restore");
            root.redis().set(stack.name() + ":restored", "yes");
            assertEquals("yes", root.redis().get(stack.name() + ":restored"), "Redis answers after the restore");
        }
    }

    private static long redisClients() {
        return watching.sync().clientList().lines().filter(line -> !line.isBlank()).count();
    }
}
