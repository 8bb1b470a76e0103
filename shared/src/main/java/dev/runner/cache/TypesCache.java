package dev.runner.cache;

import com.github.benmanes.caffeine.cache.Cache;
import dev.runner.metrics.Metrics;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Integration types (JSON) for the hot paths: an in-process layer with a short TTL, then Redis
 * (RUNNER_TYPES_CACHE_TTL_S), then the loader (Postgres).
 *
 * <p>Misses are not cached: a type that does not exist is asked for again next time (a type
 * created a moment later is seen at once), and lookups of made-up keys cannot evict known types. Redis unavailable, or no Redis at all: the cache
 * falls back to the loader with a logged warning (and a RedisFailOpen count), and still keeps the in-process layer.
 * {@link #invalidate} drops the Redis key and this process's entry; other processes keep theirs
 * for at most {@code localTtl}, which is why that one stays short.
 */
public final class TypesCache {

    private static final Logger log = LoggerFactory.getLogger(TypesCache.class);

    /** Types held in process; a deployment has a handful. */
    private static final int MAX_LOCAL = 10_000;

    /** Null = no Redis: in-process layer and loader only. */
    private final Redis redis;
    /** Null allowed only without Redis. */
    private final Keys keys;
    private final Duration redisTtl;
    private final Metrics metrics;
    private final Cache<String, String> local;

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
        this.local = Caches.expiringAfterWrite(localTtl, MAX_LOCAL, Objects.requireNonNull(clock, "clock"));
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /** The type's JSON, or null when the loader does not know it. */
    public String getOrFetch(String integrationKey, Supplier<String> loader) {
        String cached = local.getIfPresent(integrationKey);
        if (cached != null) {
            return cached;
        }
        String json = fromRedis(integrationKey);
        if (json == null) {
            json = loader.get();
            if (json == null) {
                return null;
            }
            toRedis(integrationKey, json);
        }
        local.put(integrationKey, json);
        return json;
    }

    /**
     * The type as the loader has it now, cached again: for a caller that found a handler missing
     * from a cached type, which may only be stale (a handler just added). Null when the loader does not know it.
     */
    public String refresh(String integrationKey, Supplier<String> loader) {
        local.invalidate(integrationKey);
        String json = loader.get();
        if (json == null) {
            return null;
        }
        toRedis(integrationKey, json);
        local.put(integrationKey, json);
        return json;
    }

    /** The management API changed the type: drop the Redis key and this process's entry. */
    public void invalidate(String integrationKey) {
        local.invalidate(integrationKey);
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
