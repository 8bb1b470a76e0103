package dev.runner.guard;

import dev.runner.cost.CostMeter;
import dev.runner.redis.Redis;
import dev.runner.trigger.Trigger;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The budget of a batch of 10: admit + report = 2 round trips (0.2 per item), counted where they
 * leave the client (a {@link CostMeter} hears each pipeline sent), and about 2 commands per item
 * server-side, counted by Redis itself (INFO commandstats) on a server of its own.
 */
class BudgetIT {

    private static RedisServer server;
    private static String url;

    @BeforeAll
    static void start() throws IOException {
        int port;
        try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"").build();
        server.start();
        url = "redis://127.0.0.1:" + port;
    }

    @AfterAll
    static void stop() throws IOException {
        server.stop();
    }

    @Test
    void batchOfTenCostsTwoRoundTripsAndAboutTwoCommandsPerItem() {
        var client = RedisClient.create(url);
        var meter = new CostMeter();
        try (Redis redis = Redis.connect(url, meter); var stats = client.connect()) {
            var f = new GuardFixture(redis, GuardFixture.TENANT);
            var limits = new ConcurrencyAndRate(50, 600);
            // Warm-up: scripts cached, keys exist (the steady state of a busy worker).
            // Manual items, as W1's: a backlog item's admission writes no urgent marker.
            GroupAdmission warm = f.admitGroup(batch(limits, "warm"));
            f.guard.report(List.of(GuardFixture.released(warm)));
            stats.sync().configResetstat();
            CostMeter.Costs before = meter.snapshot();

            GroupAdmission admission = f.admitGroup(batch(limits, "b"));
            List<Admission> decisions = admission.decisions();
            f.guard.report(List.of(GuardFixture.released(admission)));
            CostMeter.Costs spent = meter.snapshot().minus(before);

            assertEquals(10, GuardFixture.count(decisions, Admission.Admitted.class));
            Map<String, Long> calls = commandCalls(stats.sync().info("commandstats"));
            long scripts = calls.getOrDefault("evalsha", 0L);
            long total = calls.values().stream().mapToLong(Long::longValue).sum();
            System.out.println("BudgetIT commands for admit+report of 10 items: " + calls + " total " + total);
            assertEquals(2, spent.redisRoundTrips(), "one round trip to admit, one to report");
            assertEquals(3, spent.redisCommands(), "2 script calls in the admit round trip, 1 in the report round trip");
            assertEquals(3, scripts, "each script call ran once at the server: none fell back to EVAL");
            assertTrue(total <= 21, "server-side commands for 10 items, scripts included: " + total);
        } finally {
            client.shutdown();
        }
    }

    /** Ten items for one /process-batch call of ten. */
    private static GroupRequest batch(ConcurrencyAndRate limits, String prefix) {
        return new GroupRequest("crm-x", "sync", limits, items(prefix, "acme", Trigger.MANUAL, 10), 10,
                java.time.Duration.ofMillis(50), java.time.Duration.ofSeconds(30));
    }

    private static List<String> ids(String prefix, int count) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(prefix + "-" + i);
        }
        return ids;
    }

    /** cmdstat_zadd:calls=3,usec=… lines → zadd=3; the INFO call itself is left out. */
    private static Map<String, Long> commandCalls(String info) {
        Map<String, Long> calls = new TreeMap<>();
        for (String line : info.split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            String count = line.substring(line.indexOf("calls=") + 6, line.indexOf(',', line.indexOf("calls=")));
            if (!name.equals("info") && !name.equals("config")) {
                calls.put(name, Long.parseLong(count));
            }
        }
        return calls;
    }
}
