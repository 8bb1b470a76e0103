package dev.runner.cache;

import dev.runner.metrics.Metrics;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Integration types (JSON) for the hot paths: an in-process layer with a short TTL, then Redis
 * (RUNNER_TYPES_CACHE_TTL_S), then the loader (Postgres).
 *
 * <p>Misses are not cached: a type that does not exist is asked for again next time (a type
 * created a moment later is seen at once). Redis unavailable, or no Redis at all: the cache
 * falls back to the loader with a logged warning (and a RedisFailOpen count), and still keeps the in-process layer.
 * {@link #invalidate} drops the Redis key and this process's entry; other processes keep theirs
 * for at most {@code localTtl}, which is why that one stays short.
 */
public final class TypesCache {

    private static final Logger log = LoggerFactory.getLogger(TypesCache.class);

    private record Local(String json, long expiresAtMs) {}

    /** Null = no Redis: in-process layer and loader only. */
    private final Redis redis;
    /** Null allowed only without Redis. */
    private final Keys keys;
    private final Duration redisTtl;
    private final Duration localTtl;
    private final Clock clock;
    private final Metrics metrics;
    private final ConcurrentHashMap<String, Local> local = new ConcurrentHashMap<>();

    public TypesCache(Redis redis, Keys keys, Duration redisTtl, Duration localTtl, Clock clock) {
        this(redis, keys, redisTtl, localTtl, clock, Metrics.NONE);
    }

    public TypesCache(Redis redis, Keys keys, Duration redisTtl, Duration localTtl, Clock clock, Metrics metrics) {
        this.redis = redis;
        this.keys = redis == null ? keys : Objects.requireNonNull(keys, "keys (needed with a Redis)");
        if (redisTtl.toMillis() < 1) {
            throw new IllegalArgumentException("redisTtl < 1 ms: " + redisTtl);
        }
        if (localTtl.isNegative()) {
            throw new IllegalArgumentException("localTtl < 0: " + localTtl);
        }
        this.redisTtl = redisTtl;
        this.localTtl = localTtl;
        this.clock = Objects.requireNonNull(clock, "clock");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /** The type's JSON, or null when the loader does not know it. */
    public String getOrFetch(String integrationKey, Supplier<String> loader) {
        long now = clock.millis();
        Local cached = local.get(integrationKey);
        if (cached != null && now < cached.expiresAtMs()) {
            return cached.json();
        }
        String json = fromRedis(integrationKey);
        if (json == null) {
            json = loader.get();
            if (json == null) {
                local.remove(integrationKey);
                return null;
            }
            toRedis(integrationKey, json);
        }
        if (!localTtl.isZero()) {
            local.put(integrationKey, new Local(json, now + localTtl.toMillis()));
        }
        return json;
    }

    /**
     * The type as the loader has it now, cached again: for a caller that found a handler missing
     * from a cached type, which may only be stale (a handler just added). Null when the loader does not know it.
     */
    public String refresh(String integrationKey, Supplier<String> loader) {
        local.remove(integrationKey);
        String json = loader.get();
        if (json == null) {
            return null;
        }
        toRedis(integrationKey, json);
        if (!localTtl.isZero()) {
            local.put(integrationKey, new Local(json, clock.millis() + localTtl.toMillis()));
        }
        return json;
    }

    /** The management API changed the type: drop the Redis key and this process's entry. */
    public void invalidate(String integrationKey) {
        local.remove(integrationKey);
        if (redis == null) {
            return;
        }
        try {
            redis.delete(keys.type(integrationKey));
        } catch (RuntimeException e) {
            metrics.redisFailOpen("cache invalidation");
            log.warn("Redis unavailable, cached type of {} lives until its TTL ({}): {}", integrationKey, redisTtl, e.toString());
        }
    }

    private String fromRedis(String integrationKey) {
        if (redis == null) {
            return null;
        }
        try {
            return redis.get(keys.type(integrationKey));
        } catch (RuntimeException e) {
            metrics.redisFailOpen("cache read");
            log.warn("Redis unavailable, loading type {} from the database: {}", integrationKey, e.toString());
            return null;
        }
    }

    private void toRedis(String integrationKey, String json) {
        if (redis == null) {
            return;
        }
        try {
            redis.set(keys.type(integrationKey), json, redisTtl);
        } catch (RuntimeException e) {
            metrics.redisFailOpen("cache write");
            log.warn("Redis unavailable, type {} not cached there: {}", integrationKey, e.toString());
        }
    }
}
