package dev.runner.cache;

import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisTargets;
import dev.runner.redis.TestClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The three layers of TypesCache on real Redis (single and cluster), and its fallback without Redis. */
class TypesCacheIT {

    private static final String TYPE = "{\"key\":\"crm-x\",\"handlers\":[\"sync\"]}";

    private final Keys keys = RedisTargets.uniqueKeys();
    private final TestClock clock = TestClock.now();
    private final AtomicInteger loads = new AtomicInteger();
    private final Supplier<String> postgres = () -> {
        loads.incrementAndGet();
        return TYPE;
    };

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void inProcessLayerServesWithinItsTtl(RedisTargets.Target target) {
        var cache = new TypesCache(target.redis(), keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        assertEquals(TYPE, cache.getOrFetch("crm-x", postgres));
        target.redis().set(keys.type("crm-x"), "changed-in-redis");
        assertEquals(TYPE, cache.getOrFetch("crm-x", postgres));
        assertEquals(1, loads.get());

        clock.advance(Duration.ofSeconds(5));
        assertEquals("changed-in-redis", cache.getOrFetch("crm-x", postgres), "past the local TTL, Redis answers");
        assertEquals(1, loads.get());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void redisLayerServesOtherProcesses(RedisTargets.Target target) {
        var first = new TypesCache(target.redis(), keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        var second = new TypesCache(target.redis(), keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        first.getOrFetch("crm-x", postgres);
        assertEquals(TYPE, second.getOrFetch("crm-x", postgres));
        assertEquals(1, loads.get());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void redisCopyExpiresAfterItsTtl(RedisTargets.Target target) {
        var cache = new TypesCache(target.redis(), keys, Duration.ofMillis(300), Duration.ZERO, clock);
        cache.getOrFetch("crm-x", postgres);
        await().atMost(Duration.ofSeconds(5)).until(() -> target.redis().get(keys.type("crm-x")) == null);
        cache.getOrFetch("crm-x", postgres);
        assertEquals(2, loads.get());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void invalidateDropsBothLayers(RedisTargets.Target target) {
        var cache = new TypesCache(target.redis(), keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        cache.getOrFetch("crm-x", postgres);
        cache.invalidate("crm-x");
        assertNull(target.redis().get(keys.type("crm-x")));
        assertEquals("v2", cache.getOrFetch("crm-x", () -> "v2"));
        assertEquals("v2", target.redis().get(keys.type("crm-x")));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void missesAreNotCached(RedisTargets.Target target) {
        var cache = new TypesCache(target.redis(), keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        assertNull(cache.getOrFetch("new-one", () -> null));
        assertEquals(TYPE, cache.getOrFetch("new-one", postgres), "a type created a moment later is seen at once");
    }

    @Test
    void fallsBackToTheLoaderWhenRedisIsDown() {
        try (Redis down = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(500))) {
            var cache = new TypesCache(down, keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
            assertEquals(TYPE, cache.getOrFetch("crm-x", postgres));
            assertEquals(TYPE, cache.getOrFetch("crm-x", postgres));
            assertEquals(1, loads.get(), "the in-process layer still works");
            cache.invalidate("crm-x");
            assertEquals(TYPE, cache.getOrFetch("crm-x", postgres));
            assertEquals(2, loads.get());
        }
    }

    @Test
    void worksWithoutRedis() {
        var cache = new TypesCache(null, keys, Duration.ofSeconds(60), Duration.ofSeconds(5), clock);
        cache.getOrFetch("crm-x", postgres);
        cache.getOrFetch("crm-x", postgres);
        clock.advance(Duration.ofSeconds(5));
        cache.getOrFetch("crm-x", postgres);
        assertEquals(2, loads.get());
    }
}
