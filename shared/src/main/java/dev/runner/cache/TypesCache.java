package dev.runner.cache;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/** Placeholder until the Redis-backed cache lands: in-process layer only. */
public final class TypesCache {
    private record Entry(String value, long expiresAtMs) {}

    private final ConcurrentHashMap<String, Entry> local = new ConcurrentHashMap<>();
    private final Duration localTtl;
    private final Clock clock;

    public TypesCache(Object redis, Object keys, Duration redisTtl, Duration localTtl, Clock clock) {
        this.localTtl = localTtl;
        this.clock = clock;
    }

    public String getOrFetch(String integrationKey, Supplier<String> loader) {
        long now = clock.millis();
        Entry entry = local.get(integrationKey);
        if (entry != null && entry.expiresAtMs > now) {
            return entry.value;
        }
        String value = loader.get();
        if (value != null) {
            local.put(integrationKey, new Entry(value, now + localTtl.toMillis()));
        }
        return value;
    }

    public void invalidate(String integrationKey) {
        local.remove(integrationKey);
    }
}
