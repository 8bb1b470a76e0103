package dev.runner.redis;

import dev.runner.config.RunnerConfig;
import dev.runner.embedded.EmbeddedRedisCluster;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.guard.ConcurrencyAndRate;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Script loading, digests and pipelining against real Redis, single and cluster. */
class RedisIT {

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void scriptsAreReloadedAfterRedisForgetsThem(RedisTargets.Target target) {
        Redis redis = target.redis();
        Keys keys = RedisTargets.uniqueKeys();
        var guard = new Guard(redis, keys, new RunnerConfig.Breaker(5, Duration.ofSeconds(30), 2),
                new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)), TestClock.now());
        var oneAtATime = new ConcurrencyAndRate(1, 0);
        GroupAdmission first = guard.admit(List.of(new GroupRequest("crm-x", "sync", oneAtATime, List.of(new Candidate("a", "acme", 1))))).getFirst();
        assertFalse(first.failedOpen());

        forEachNode(redis, node -> node.scriptFlush());
        forEachNode(redis, node -> assertEquals(List.of(false), node.scriptExists(Script.ADMIT_HANDLER.sha()), "flushed"));

        GroupAdmission second = guard.admit(List.of(new GroupRequest("crm-x", "sync", oneAtATime, List.of(new Candidate("b", "acme", 1))))).getFirst();
        assertFalse(second.failedOpen(), "the scripts were loaded again, not skipped by the fail-open policy");
        var waiting = assertInstanceOf(Admission.Deferred.class, second.decisions().getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason(), "a's lease, taken before the flush, still counts");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void everyShaIsTheDigestRedisComputesForTheExpandedBody(RedisTargets.Target target) {
        forEachNode(target.redis(), node -> {
            for (Script script : Script.values()) {
                assertEquals(node.scriptLoad(script.body()), script.sha(), script.name());
            }
        });
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aScriptTakesMoreValuesThanLuaCanUnpackAtOnce(RedisTargets.Target target) {
        Keys keys = RedisTargets.uniqueKeys();
        List<String> ids = java.util.stream.IntStream.range(0, 20_000).mapToObj(i -> "item-" + i).toList();
        List<?> answers = (List<?>) target.redis().run(RedisTargets.admitTenant(keys, "bulk", System.currentTimeMillis(), 100_000, ids));
        assertEquals(2 * 20_000, answers.size(), "an outcome and a time per item");
        assertTrue(answers.stream().allMatch(d -> (Long) d == 0L), "every item admitted now");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void callsOnManySlotsComeBackInOrder(RedisTargets.Target target) {
        Redis redis = target.redis();
        Keys keys = RedisTargets.uniqueKeys();
        long now = System.currentTimeMillis();
        List<Redis.Call> calls = java.util.stream.IntStream.range(0, 30)
                .mapToObj(i -> RedisTargets.admitTenant(keys, "tenant-" + i, now, i + 1, List.of("x", "y")))
                .toList();
        List<Object> replies = redis.run(calls);
        for (int i = 0; i < 30; i++) {
            int limit = i + 1;
            // The window gives out at once all of a limit below 2, else all but a quarter (includes/tenantSlots).
            long atOnce = limit < 2 ? limit : limit - (limit + 3) / 4;
            assertEquals(Math.min(atOnce, 2), admittedNow(replies.get(i)), "tenant-" + i);
        }
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void keysAndArgumentsOutsideAsciiArriveByteForByte(RedisTargets.Target target) {
        Redis redis = target.redis();
        Keys keys = RedisTargets.uniqueKeys();
        String key = keys.tenantWindow("t\u00e9nant-\u65e5\u672c-\uD83D\uDE80");
        String value = "v\u00e4lue \u65e5\u672c \uD83D\uDE80 \u0000 end";
        redis.set(key, value);
        assertEquals(value, redis.get(key));

        // A length announced wrong would put the protocol out of step: the calls after it would fail or mix up.
        long now = System.currentTimeMillis();
        List<Object> replies = redis.run(List.of(
                RedisTargets.admitTenant(keys, "\u00e9t\u00e9", now, 1, List.of("\u00e9l\u00e9ment-\uD83D\uDE80", "b")),
                RedisTargets.admitTenant(keys, "plain", now, 3, List.of("x", "y"))));
        assertEquals(1, admittedNow(replies.get(0)));
        assertEquals(2, admittedNow(replies.get(1)));
        assertEquals(value, redis.get(key));
    }

    /** How many items an admitTenant-4.lua answer (an outcome and a time per item) admitted now. */
    private static long admittedNow(Object answer) {
        List<?> entries = (List<?>) answer;
        return java.util.stream.IntStream.range(0, entries.size() / 2).filter(i -> (Long) entries.get(2 * i) == 0L).count();
    }

    /** Runs {@code command} on the standalone server, or on every node of the cluster. */
    private static void forEachNode(Redis redis, Consumer<RedisCommands<String, String>> command) {
        List<String> urls = redis.isCluster()
                ? EmbeddedRedisCluster.shared().ports().stream().map(port -> "redis://127.0.0.1:" + port).toList()
                : List.of(RedisTargets.standaloneUrl());
        for (String url : urls) {
            var client = RedisClient.create(url);
            try (var connection = client.connect()) {
                command.accept(connection.sync());
            } finally {
                client.shutdown();
            }
        }
    }
}
