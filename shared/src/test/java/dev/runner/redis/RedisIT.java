package dev.runner.redis;

import dev.runner.config.RunnerConfig;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.Guard;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.HandlerLimits;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Script loading and pipelining against real Redis, single and cluster. */
class RedisIT {

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void scriptsAreReloadedAfterRedisForgetsThem(RedisTargets.Target target) {
        Redis redis = target.redis();
        Keys keys = RedisTargets.uniqueKeys();
        var guard = new Guard(redis, keys, new RunnerConfig.Breaker(5, Duration.ofSeconds(30), 2),
                new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)), TestClock.now());
        var request = new GroupRequest("crm-x", "sync", HandlerLimits.UNLIMITED, List.of(new Candidate("a", "acme", 1)));
        guard.admit(List.of(request));

        flushScripts(redis);

        var decision = guard.admit(List.of(request)).getFirst().decisions().getFirst();
        assertInstanceOf(Admission.Admitted.class, decision);
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void callsOnManySlotsComeBackInOrder(RedisTargets.Target target) {
        Redis redis = target.redis();
        Keys keys = RedisTargets.uniqueKeys();
        long now = System.currentTimeMillis();
        List<Redis.Call> calls = java.util.stream.IntStream.range(0, 30)
                .mapToObj(i -> new Redis.Call(Script.ADMIT_TENANT, List.of(keys.tenantWindow("tenant-" + i)),
                        List.of(Long.toString(now), "60000", Integer.toString(i + 1), "5000", "x", "y")))
                .toList();
        List<Object> replies = redis.run(calls);
        for (int i = 0; i < 30; i++) {
            long admitted = ((List<?>) replies.get(i)).stream().filter(d -> (Long) d == 0).count();
            assertEquals(Math.min(i + 1, 2), admitted, "tenant-" + i);
        }
    }

    private static void flushScripts(Redis redis) {
        if (redis.isCluster()) {
            var client = RedisClusterClient.create(RedisTargets.clusterUrl().replace("redis-cluster://", "redis://").split(",")[0]);
            try (var connection = client.connect()) {
                connection.sync().scriptFlush();
            } finally {
                client.shutdown();
            }
        } else {
            var client = RedisClient.create(RedisTargets.standaloneUrl());
            try (var connection = client.connect()) {
                connection.sync().scriptFlush();
            } finally {
                client.shutdown();
            }
        }
    }
}
