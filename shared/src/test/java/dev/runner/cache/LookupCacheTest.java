package dev.runner.cache;

import dev.runner.redis.TestClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LookupCacheTest {

    private static final int FOUND = 100;
    private static final int ABSENT = 10;

    private final TestClock clock = TestClock.now();
    private final AtomicInteger lookups = new AtomicInteger();
    private final Function<String, Optional<String>> lookup = key -> {
        lookups.incrementAndGet();
        return key.startsWith("known-") ? Optional.of("value of " + key) : Optional.empty();
    };

    @Test
    void tenTimesTheAbsentBoundOfUnknownKeysEvictsNoFoundAnswer() {
        var cache = new LookupCache<String, String>(Duration.ofSeconds(60), FOUND, ABSENT, clock);
        for (int i = 0; i < FOUND; i++) {
            assertEquals(Optional.of("value of known-" + i), cache.get("known-" + i, lookup));
        }
        for (int i = 0; i < 10 * FOUND; i++) {
            assertEquals(Optional.empty(), cache.get("made-up-" + i, lookup));
        }
        int afterFlood = lookups.get();
        for (int i = 0; i < FOUND; i++) {
            assertEquals(Optional.of("value of known-" + i), cache.get("known-" + i, lookup));
        }
        assertEquals(afterFlood, lookups.get(), "every known key still answered from the cache");
    }

    @Test
    void bothKindsOfAnswerAreReadAgainOnceTheirTtlHasPassedOrTheyAreInvalidated() {
        var cache = new LookupCache<String, String>(Duration.ofSeconds(5), FOUND, ABSENT, clock);
        cache.get("known-a", lookup);
        cache.get("missing", lookup);
        cache.get("known-a", lookup);
        cache.get("missing", lookup);
        assertEquals(2, lookups.get(), "each asked once within the TTL");

        clock.advance(Duration.ofSeconds(6));
        cache.get("known-a", lookup);
        cache.get("missing", lookup);
        assertEquals(4, lookups.get(), "read again after the TTL");

        cache.invalidate("known-a");
        cache.get("known-a", lookup);
        assertEquals(5, lookups.get(), "read again after an invalidation");
    }
}
