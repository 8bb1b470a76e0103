package dev.runner.callback;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CallbackUrlsTest {

    private static final Instant NOW = Instant.parse("2026-12-05T05:00:00Z");
    private static final String KEY = "callback-key-0123456789abcdef";
    private static final UUID ITEM = UUID.fromString("0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8a9b");

    private static CallbackUrls at(Instant now) {
        return new CallbackUrls("https://api.example/", KEY, Clock.fixed(now, ZoneOffset.UTC));
    }

    private static String token(URI url) {
        String path = url.getPath();
        return path.substring(path.lastIndexOf('/') + 1);
    }

    @Test
    void aUrlNamesItsItemAndAttemptAndVerifiesUntilItExpires() {
        URI url = at(NOW).url(ITEM, 2, Duration.ofMinutes(10));

        assertTrue(url.toString().startsWith("https://api.example/callbacks/" + ITEM + ".2."), url.toString());
        var signed = assertInstanceOf(CallbackUrls.Verdict.Signed.class, at(NOW.plusSeconds(599)).verify(token(url)));
        assertEquals(ITEM, signed.itemId());
        assertEquals(2, signed.attempt());
        assertFalse(signed.expired());
        assertTrue(((CallbackUrls.Verdict.Signed) at(NOW.plusSeconds(602)).verify(token(url))).expired());
    }

    /**
     * A rotation as the key's secret goes through it, read at each signing and check: the new key added after the old
     * (verifies, does not sign), then put first (signs), then the old dropped; the callbacks of items that were waiting
     * under the old key verify until then.
     */
    @Test
    void aRotatedKeySignsWithTheNewKeyOnceFirstAndTheOldVerifiesUntilDropped() {
        String newKey = "callback-key-new-0123456789abcdef";
        AtomicReference<String> secret = new AtomicReference<>(KEY);
        CallbackUrls urls = new CallbackUrls("https://api.example", secret::get, Clock.fixed(NOW, ZoneOffset.UTC));
        String underOld = token(urls.url(ITEM, 1, Duration.ofMinutes(10)));

        secret.set(KEY + "\n" + newKey);
        assertEquals(underOld, token(urls.url(ITEM, 1, Duration.ofMinutes(10))), "added after the old, the new key does not sign yet");
        secret.set(newKey + " " + KEY);
        String underNew = token(urls.url(ITEM, 1, Duration.ofMinutes(10)));
        assertNotEquals(underOld, underNew, "put first, it signs");
        assertInstanceOf(CallbackUrls.Verdict.Signed.class, urls.verify(underOld), "a wait signed before the rotation");
        assertInstanceOf(CallbackUrls.Verdict.Signed.class, urls.verify(underNew));

        secret.set(newKey);
        assertInstanceOf(CallbackUrls.Verdict.Unknown.class, urls.verify(underOld), "the old key dropped, its tokens are unknown");
        assertInstanceOf(CallbackUrls.Verdict.Signed.class, urls.verify(underNew));
        secret.set(newKey + " short");
        assertInstanceOf(CallbackUrls.Verdict.Signed.class, urls.verify(underNew), "a bad value keeps the keys read before");
        assertThrows(IllegalArgumentException.class, () -> new CallbackUrls("https://api.example", newKey + " short", Clock.systemUTC()),
                "every key is held to the length rule");
    }

    @Test
    void anyChangeToATokenMakesItUnknown() {
        String token = token(at(NOW).url(ITEM, 1, Duration.ofMinutes(10)));
        String[] parts = token.split("\\.");

        for (String forged : new String[] {
                parts[0] + ".2." + parts[2] + "." + parts[3],
                parts[0] + "." + parts[1] + "." + (Long.parseLong(parts[2]) + 1) + "." + parts[3],
                UUID.randomUUID() + "." + parts[1] + "." + parts[2] + "." + parts[3],
                parts[0] + "." + parts[1] + "." + parts[2] + "." + (parts[3].charAt(0) == 'A' ? 'B' : 'A') + parts[3].substring(1),
                token + "x", "", "../../runs"}) {
            assertInstanceOf(CallbackUrls.Verdict.Unknown.class, at(NOW).verify(forged), forged);
        }
    }

    @Test
    void aTokenSignedWithAnotherKeyIsUnknown() {
        String token = token(new CallbackUrls("https://api.example", "another-key-0123456789abcdef", Clock.fixed(NOW, ZoneOffset.UTC))
                .url(ITEM, 1, Duration.ofMinutes(10)));

        assertInstanceOf(CallbackUrls.Verdict.Unknown.class, at(NOW).verify(token));
    }

    @Test
    void withoutABaseNoUrlIsGivenAndABaseWithoutAKeyFailsTheStart() {
        CallbackUrls none = new CallbackUrls(null, (String) null, Clock.systemUTC());

        assertFalse(none.issuing());
        assertInstanceOf(CallbackUrls.Verdict.Unknown.class, none.verify(token(at(NOW).url(ITEM, 1, Duration.ofMinutes(10)))));
        assertThrows(IllegalStateException.class, () -> new CallbackUrls("https://api.example", (String) null, Clock.systemUTC()));
        assertThrows(IllegalArgumentException.class, () -> new CallbackUrls("https://api.example", "short", Clock.systemUTC()));
    }
}
