package dev.runner.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.time.Clock;
import java.time.Duration;

/**
 * The in-process caches: Caffeine, bounded, entries trusted for a TTL from when they were written,
 * on Runner's clock (tests advance it). Maintenance runs on the calling thread: no pool thread
 * starts for it, at a SnapStart checkpoint or otherwise.
 */
public final class Caches {

    private Caches() {}

    /** At most {@code maximumSize} entries, each for {@code ttl} after its write ({@link Duration#ZERO}: none kept). */
    public static <K, V> Cache<K, V> expiringAfterWrite(Duration ttl, long maximumSize, Clock clock) {
        return builder(maximumSize).expireAfterWrite(ttl).ticker(() -> clock.millis() * 1_000_000L).build();
    }

    /** At most {@code maximumSize} entries, kept until evicted: for values derived from others, which never go stale. */
    public static <K, V> Cache<K, V> bounded(long maximumSize) {
        return builder(maximumSize).build();
    }

    private static Caffeine<Object, Object> builder(long maximumSize) {
        return Caffeine.newBuilder().maximumSize(maximumSize).executor(Runnable::run);
    }
}
