package dev.runner.security;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SignatureTest {

    private static final byte[] BODY = "{\"externalId\":\"a\"}".getBytes(StandardCharsets.UTF_8);
    private static final Instant NOW = Instant.ofEpochSecond(1_796_040_000L);
    private static final Duration TOLERANCE = Duration.ofSeconds(300);

    @Test
    void matchesTheDocumentedScheme() {
        // printf '%s'  '1796040000.{"externalId":"a"}' | openssl dgst -sha256 -hmac secret-secret-secret
        assertEquals("v1=72b28be636cef2b54f6515d3ec874f85c7b823b6d3a3055f3e10837cd5c7acdf",
                Signature.sign("secret-secret-secret", NOW.getEpochSecond(), BODY));
    }

    @Test
    void acceptsItsOwnSignatureWithinTheWindow() {
        String signature = Signature.sign("secret", NOW.getEpochSecond() - 299, BODY);
        assertNull(Signature.verify("secret", Long.toString(NOW.getEpochSecond() - 299), signature, BODY, NOW, TOLERANCE));
    }

    @Test
    void refusesEachWayOfBeingWrong() {
        String ts = Long.toString(NOW.getEpochSecond());
        String good = Signature.sign("secret", NOW.getEpochSecond(), BODY);
        assertEquals(Signature.Failure.MISSING, Signature.verify("secret", null, good, BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MISSING, Signature.verify("secret", ts, "", BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MALFORMED, Signature.verify("secret", "yesterday", good, BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MALFORMED, Signature.verify("secret", ts, "sha256=abc", BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MALFORMED, Signature.verify("secret", ts, "v1=zz", BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MISMATCH, Signature.verify("other", ts, good, BODY, NOW, TOLERANCE));
        assertEquals(Signature.Failure.MISMATCH, Signature.verify("secret", ts, good, "{}".getBytes(StandardCharsets.UTF_8), NOW, TOLERANCE));
        String old = Long.toString(NOW.getEpochSecond() - 301);
        assertEquals(Signature.Failure.STALE, Signature.verify("secret", old, Signature.sign("secret", NOW.getEpochSecond() - 301, BODY), BODY, NOW, TOLERANCE));
        String future = Long.toString(NOW.getEpochSecond() + 301);
        assertEquals(Signature.Failure.STALE, Signature.verify("secret", future, Signature.sign("secret", NOW.getEpochSecond() + 301, BODY), BODY, NOW, TOLERANCE));
    }

    @Test
    void theTimestampIsInsideTheMac() {
        String signature = Signature.sign("secret", NOW.getEpochSecond(), BODY);
        assertEquals(Signature.Failure.MISMATCH, Signature.verify("secret", Long.toString(NOW.getEpochSecond() - 1), signature, BODY, NOW, TOLERANCE));
    }

    @Test
    void secretsCompareWhateverTheirLengths() {
        assertTrue(Signature.secretsEqual("key", "key"));
        assertFalse(Signature.secretsEqual("key", "key2"));
        assertFalse(Signature.secretsEqual("key", null));
        assertFalse(Signature.secretsEqual(null, "key"));
    }
}
