package dev.runner.guard;

import dev.runner.metrics.Metrics;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisTargets;
import dev.runner.redis.RedisUnavailableException;
import dev.runner.redis.TestClock;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import redis.embedded.RedisServer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.runner.guard.GuardFixture.count;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fail-open policy with Redis unreachable from the start, Redis dying under a live Guard, and
 * a script failing on a reachable Redis (a bug, told apart from an outage).
 */
class RedisDownIT {

    private static final ConcurrencyAndRate TIGHT = new ConcurrencyAndRate(1, 1);

    @Test
    void admitFailsOpenWhenRedisIsUnreachable() {
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var f = new GuardFixture(down, GuardFixture.TENANT);
            List<GroupAdmission> admissions = f.guard.admit(List.of(
                    group("crm-x", "sync", TIGHT, items("a", "acme", Trigger.SCHEDULE, 5)),
                    group("erp-y", "push", TIGHT, items("b", "acme", Trigger.WEBHOOK, 2))));
            assertEquals(5, count(admissions.get(0).decisions(), Admission.Admitted.class));
            assertEquals(2, count(admissions.get(1).decisions(), Admission.Admitted.class));
        }
    }

    @Test
    void eachFailOpenIsCountedByOperation() {
        Map<String, Integer> counted = new TreeMap<>();
        Metrics metrics = new Metrics() {
            @Override
            public void redisFailOpen(String operation) {
                counted.merge(operation, 1, Integer::sum);
            }
        };
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var guard = new Guard(down, RedisTargets.uniqueKeys(),
                    new Guard.Settings(GuardFixture.BREAKER, GuardFixture.TENANT, Guard.DEFAULT_LEASE_TTL), TestClock.now(), metrics);
            guard.admit(List.of(group("crm-x", "sync", TIGHT, items("a", "acme", Trigger.SCHEDULE, 5))));
            guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("i-1", "i-2", "i-3")));
            guard.report(List.of(GuardFixture.tally("crm-x", "sync", 0, 1, List.of("a-0"))));
            guard.breaker("crm-x");
            assertFalse(guard.awaitLease("crm-x", "sync", Duration.ofSeconds(30)),
                    "no ring can come: the wait ends at once (a short sleep), so the next admission fails open");
        }
        assertEquals(Map.of("admission", 1, "slot reservation", 1, "report", 1, "breaker read", 1, "lease wait", 1), counted);
    }

    @Test
    void admissionSaysRedisWasUnavailable() {
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var f = new GuardFixture(down, GuardFixture.TENANT);
            GroupAdmission admission = f.guard.admit(List.of(group("crm-x", "sync", TIGHT, items("a", "acme", Trigger.WEBHOOK, 1)))).getFirst();
            assertEquals(FailOpen.REDIS_UNAVAILABLE, admission.failOpen());
        }
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aFailingScriptFailsOpenAsABugNotAsAnOutage(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        // A key of the wrong type makes admitTenant fail inside Redis: WRONGTYPE, a script error.
        f.redis.set(f.keys.tenantWindow("acme"), "not a sorted set");
        GroupAdmission admission = f.guard.admit(List.of(group("crm-x", "sync", TIGHT, items("a", "acme", Trigger.WEBHOOK, 3)))).getFirst();
        assertEquals(FailOpen.SCRIPT_FAILED, admission.failOpen());
        assertEquals(3, count(admission.decisions(), Admission.Admitted.class));
        assertEquals(TenantSlot.NONE, f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("b"))).get("b"),
                "no delay, and no slot for the item to carry: the worker's admission counts it");
    }

    @Test
    void breakerCountsAsClosedAndReportsAreDropped() {
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var f = new GuardFixture(down, GuardFixture.TENANT);
            f.guard.report(List.of(GuardFixture.tally("crm-x", "sync", 0, 9, List.of("a-0"))));
            assertEquals(BreakerState.CLOSED, f.guard.breaker("crm-x").state());
        }
    }

    @Test
    void pauseThatDidNotReachRedisIsAnError() {
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var f = new GuardFixture(down, GuardFixture.TENANT);
            assertThrows(RedisUnavailableException.class, () -> f.guard.setPaused("crm-x", "sync", true));
        }
    }

    @Test
    void admitFailsOpenWhenRedisDiesAndRecoversWhenItReturns() throws Exception {
        int port;
        try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"").build();
        server.start();
        try (Redis redis = Redis.connect("redis://127.0.0.1:" + port, Duration.ofMillis(500))) {
            var f = new GuardFixture(redis, GuardFixture.TENANT);
            f.guard.setPaused("crm-x", "sync", true);
            assertTrue(f.admitOne(group("crm-x", "sync", TIGHT, items("a", "acme", Trigger.WEBHOOK, 2)))
                    .stream().allMatch(Admission.Paused.class::isInstance));

            server.stop();
            assertEquals(2, count(f.admitOne(group("crm-x", "sync", TIGHT, items("b", "acme", Trigger.WEBHOOK, 2))),
                    Admission.Admitted.class), "fail-open: no item is parked or lost while Redis is away");
        } finally {
            if (server.isActive()) {
                server.stop();
            }
        }
    }
}
