package dev.runner.cache;

import dev.runner.redis.TestClock;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

    @Test
    void manyKeysAreLookedUpTogetherOnlyForWhatIsNotCachedAndAbsentOnesAreCachedToo() {
        var cache = new LookupCache<String, String>(Duration.ofSeconds(5), FOUND, ABSENT, clock);
        cache.get("known-a", lookup);
        List<Set<String>> asked = new ArrayList<>();
        Function<Set<String>, Map<String, String>> many = keys -> {
            asked.add(keys);
            Map<String, String> found = new HashMap<>();
            keys.stream().filter(key -> key.startsWith("known-")).forEach(key -> found.put(key, "value of " + key));
            return found;
        };

        var answers = cache.getAll(List.of("known-a", "known-b", "missing"), many);
        var again = cache.getAll(List.of("known-a", "known-b", "missing"), many);

        assertEquals(List.of(Set.of("known-b", "missing")), asked, "one lookup, of the keys not cached");
        assertEquals(Map.of("known-a", Optional.of("value of known-a"), "known-b", Optional.of("value of known-b"),
                "missing", Optional.empty()), answers);
        assertEquals(answers, again);
    }
}
