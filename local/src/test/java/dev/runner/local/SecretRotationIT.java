package dev.runner.local;

import dev.runner.local.secrets.LocalSecretsManager;
import dev.runner.store.DatabaseRole;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The database password is rotated under load, as Secrets Manager rotates an RDS-managed secret:
 * the role's password changes first, the secret a moment later; meanwhile the pool's connections
 * retire, so every request needs a new login. Logins fail until the secret holds the new password,
 * then the first refused login re-reads it and the pool heals: no request started after the
 * secret was updated fails, and none before fails for long (requests wait for a connection
 * instead). No redeploy, no restart.
 */
class SecretRotationIT {

    /** The management API's own login (GET /health reads the database as it). */
    private static final String ROLE = DatabaseRole.API.roleName();
    private static final String SECRET = DatabaseRole.API.secretName("runner/database-login/");
    private static LocalRuntime runtime;

    /** One GET /health: when it started, how it ended. */
    private record Call(Instant started, Instant ended, int status) {}

    @BeforeAll
    static void start() {
        runtime = LocalRuntime.start(LocalOptions.defaults(LocalRuntimeIT.projectTemplate(), Map.of()).withFreePorts().withDemo(false));
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aRotatedDatabasePasswordIsPickedUpWithoutARequestFailingAfterTheSecretChanged() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI health = runtime.apiUrl().resolve("/health");
        ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
        AtomicBoolean warming = new AtomicBoolean(true);
        ExecutorService warm = Executors.newVirtualThreadPerTaskExecutor();
        warm.submit(() -> hammer(http, health, calls, warming));
        awaitSuccesses(calls, 5);
        warming.set(false);
        warm.shutdown();
        assertTrue(warm.awaitTermination(30, TimeUnit.SECONDS));

        String newPassword = "rotated-" + Long.toHexString(System.nanoTime());
        Instant rotated;
        try (Connection admin = admin(); Statement statement = admin.createStatement()) {
            // The rotation's setSecret step: the role changes before the secret does.
            statement.execute("ALTER ROLE " + ROLE + " PASSWORD '" + newPassword + "'");
            rotated = Instant.now();
            // The pool's connections retire (its max lifetime, a failover): every connection from now on is a new login.
            statement.execute("select pg_terminate_backend(pid) from pg_stat_activity where usename = '" + ROLE + "'");
        }
        // Past HikariCP's 500 ms alive-bypass window, so the pool checks its idle connections and finds them gone.
        Thread.sleep(600);
        AtomicBoolean running = new AtomicBoolean(true);
        ExecutorService load = Executors.newVirtualThreadPerTaskExecutor();
        for (int i = 0; i < 4; i++) {
            load.submit(() -> hammer(http, health, calls, running));
        }
        // The window between the two steps of a rotation, then the load after it: durations of the scenario.
        Thread.sleep(1500);
        runtime.secrets().put(SECRET, LocalSecretsManager.json(Map.of("username", ROLE, "password", newPassword)));
        Instant updated = Instant.now();
        Thread.sleep(5000);
        running.set(false);
        load.shutdown();
        assertTrue(load.awaitTermination(30, TimeUnit.SECONDS));

        List<Call> afterUpdate = calls.stream().filter(c -> c.started().isAfter(updated)).toList();
        List<Call> failed = calls.stream().filter(c -> c.status() != 200).toList();
        long during = calls.stream().filter(c -> c.started().isAfter(rotated) && c.started().isBefore(updated)).count();
        System.out.printf("rotation: %d requests, %d while the secret was stale, %d failed, %d after the update%n",
                calls.size(), during, failed.size(), afterUpdate.size());
        assertTrue(afterUpdate.size() > 20, "the load went on after the update: " + afterUpdate.size());
        assertEquals(List.of(), afterUpdate.stream().filter(c -> c.status() != 200).toList(), "no request fails once the secret changed");
        assertTrue(failed.stream().allMatch(c -> c.started().isBefore(updated) && c.ended().isBefore(updated.plusSeconds(11))),
                "failures are confined to the rotation window: " + failed);
        try (Connection admin = admin(); Statement statement = admin.createStatement();
             ResultSet logins = statement.executeQuery("select count(*) from pg_stat_activity where usename = '"
                     + ROLE + "' and backend_start > '" + Timestamp.from(rotated) + "'")) {
            logins.next();
            assertTrue(logins.getInt(1) > 0, "new connections logged in with the new password");
        }
    }

    private static void hammer(HttpClient http, URI health, ConcurrentLinkedQueue<Call> calls, AtomicBoolean running) {
        HttpRequest request = HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(30)).GET().build();
        while (running.get()) {
            Instant started = Instant.now();
            int status;
            try {
                status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (Exception e) {
                status = -1;
            }
            calls.add(new Call(started, Instant.now(), status));
        }
    }

    private static void awaitSuccesses(ConcurrentLinkedQueue<Call> calls, int count) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> calls.stream().filter(c -> c.status() == 200).count() >= count);
    }

    private static Connection admin() throws SQLException {
        var endpoints = runtime.endpoints();
        return DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
    }
}
