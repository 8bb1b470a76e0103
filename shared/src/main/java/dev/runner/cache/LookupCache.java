package dev.runner.cache;

import com.github.benmanes.caffeine.cache.Cache;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * A lookup's answers for a TTL, absent ones too, each kind in a bounded cache of its own: a flood
 * of lookups for keys that exist nowhere (made-up tenants or senders) evicts only other absent
 * answers, never a found one, and Postgres is still asked once per TTL per key.
 */
public final class LookupCache<K, V> {

    private final Cache<K, V> found;
    private final Cache<K, Boolean> absent;

    /** {@code maximumFound} found answers, {@code maximumAbsent} absent ones, each trusted for {@code ttl}. */
    public LookupCache(Duration ttl, long maximumFound, long maximumAbsent, Clock clock) {
        this.found = Caches.expiringAfterWrite(ttl, maximumFound, clock, ".found");
        this.absent = Caches.expiringAfterWrite(ttl, maximumAbsent, clock, ".absent");
    }

    /** The answer as cached, else as {@code lookup} gives it now (then cached). */
    public Optional<V> get(K key, Function<K, Optional<V>> lookup) {
        V value = found.getIfPresent(key);
        if (value != null || absent.getIfPresent(key) != null) {
            return Optional.ofNullable(value);
        }
        Optional<V> read = lookup.apply(key);
        if (read.isPresent()) {
            found.put(key, read.get());
        } else {
            absent.put(key, Boolean.TRUE);
        }
        return read;
    }

    /**
     * The answers for {@code keys}, as cached, the others as {@code lookup} gives them now (one call for all the keys
     * not cached; a key it leaves out is absent), then cached.
     */
    public Map<K, Optional<V>> getAll(Collection<K> keys, Function<Set<K>, Map<K, V>> lookup) {
        Map<K, Optional<V>> answers = new LinkedHashMap<>();
        Set<K> missing = new LinkedHashSet<>();
        for (K key : keys) {
            V value = found.getIfPresent(key);
            if (value != null) {
                answers.put(key, Optional.of(value));
            } else if (absent.getIfPresent(key) != null) {
                answers.put(key, Optional.empty());
            } else {
                missing.add(key);
            }
        }
        if (!missing.isEmpty()) {
            Map<K, V> read = lookup.apply(missing);
            for (K key : missing) {
                V value = read.get(key);
                if (value != null) {
                    found.put(key, value);
                } else {
                    absent.put(key, Boolean.TRUE);
                }
                answers.put(key, Optional.ofNullable(value));
            }
        }
        return answers;
    }

    /** Forgets the key: the next lookup reads it again. */
    public void invalidate(K key) {
        found.invalidate(key);
        absent.invalidate(key);
    }
}
