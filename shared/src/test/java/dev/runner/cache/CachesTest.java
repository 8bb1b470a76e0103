package dev.runner.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.runner.redis.TestClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CachesTest {

    @Test
    void countsHitsAndMissesUnderTheClassThatBuiltTheCache() {
        Cache<String, String> cache = Caches.bounded(10);
        CacheStats before = statistics("CachesTest");
        cache.getIfPresent("a");
        cache.put("a", "1");
        cache.getIfPresent("a");
        CacheStats used = statistics("CachesTest").minus(before);
        assertEquals(1, used.hitCount());
        assertEquals(1, used.missCount());
    }

    @Test
    void aLookupCacheCountsItsFoundAndAbsentAnswersApartUnderItsOwner() {
        var lookup = new LookupCache<String, String>(Duration.ofSeconds(60), 10, 10, TestClock.now());
        Map<String, CacheStats> before = Caches.statistics();
        for (int i = 0; i < 2; i++) {
            lookup.get("known", key -> Optional.of("value"));
            lookup.get("unknown", key -> Optional.empty());
        }
        // known: a miss of both, then a hit of found; unknown: a miss of both, then a miss of found and a hit of absent.
        CacheStats found = statistics("CachesTest.found").minus(before.getOrDefault("CachesTest.found", CacheStats.empty()));
        CacheStats absent = statistics("CachesTest.absent").minus(before.getOrDefault("CachesTest.absent", CacheStats.empty()));
        assertEquals(1, found.hitCount());
        assertEquals(3, found.missCount());
        assertEquals(1, absent.hitCount());
        assertEquals(2, absent.missCount());
    }

    private static CacheStats statistics(String owner) {
        return Caches.statistics().getOrDefault(owner, CacheStats.empty());
    }
}
