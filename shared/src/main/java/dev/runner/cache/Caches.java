package dev.runner.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import com.github.benmanes.caffeine.cache.stats.ConcurrentStatsCounter;
import com.github.benmanes.caffeine.cache.stats.StatsCounter;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-process caches: Caffeine, bounded, entries trusted for a TTL from when they were written,
 * on Runner's clock (tests advance it). Maintenance runs on the calling thread: no pool thread
 * starts for it, at a SnapStart checkpoint or otherwise. Each counts its hits and misses into
 * {@link #statistics()}, under the name of the class that built it, so a benchmark can read hit rates.
 */
public final class Caches {

    private static final Map<String, StatsCounter> STATISTICS = new ConcurrentHashMap<>();
    /** Classes that build caches for others: a cache is named after the class that asked them. */
    private static final Set<String> BUILDERS = Set.of(Caches.class.getName(), LookupCache.class.getName());

    private Caches() {}

    /** At most {@code maximumSize} entries, each for {@code ttl} after its write ({@link Duration#ZERO}: none kept). */
    public static <K, V> Cache<K, V> expiringAfterWrite(Duration ttl, long maximumSize, Clock clock) {
        return expiringAfterWrite(ttl, maximumSize, clock, "");
    }

    /** The same, {@code part} telling it from its owner's other caches in {@link #statistics()}. */
    static <K, V> Cache<K, V> expiringAfterWrite(Duration ttl, long maximumSize, Clock clock, String part) {
        return builder(maximumSize, part).expireAfterWrite(ttl).ticker(() -> clock.millis() * 1_000_000L).build();
    }

    /** At most {@code maximumSize} entries, kept until evicted: for values derived from others, which never go stale. */
    public static <K, V> Cache<K, V> bounded(long maximumSize) {
        return builder(maximumSize, "").build();
    }

    /** Hits, misses and evictions of every cache of this process since it started, by owner (all its instances together). */
    public static Map<String, CacheStats> statistics() {
        Map<String, CacheStats> snapshot = new TreeMap<>();
        STATISTICS.forEach((name, counter) -> snapshot.put(name, counter.snapshot()));
        return snapshot;
    }

    private static Caffeine<Object, Object> builder(long maximumSize, String part) {
        String owner = StackWalker.getInstance().walk(frames -> frames.map(StackWalker.StackFrame::getClassName)
                .filter(name -> !BUILDERS.contains(name)).findFirst().orElse("?"));
        String name = owner.substring(owner.lastIndexOf('.') + 1) + part;
        StatsCounter counter = STATISTICS.computeIfAbsent(name, key -> new ConcurrentStatsCounter());
        return Caffeine.newBuilder().maximumSize(maximumSize).executor(Runnable::run).recordStats(() -> counter);
    }
}
