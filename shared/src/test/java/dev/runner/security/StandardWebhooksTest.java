package dev.runner.security;

import dev.runner.http.ApiRequest;
import dev.runner.security.WebhookVerification.Reason;
import dev.runner.security.WebhookVerification.Refused;
import dev.runner.security.WebhookVerification.Verified;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StandardWebhooksTest {

    // The official vectors of the Standard Webhooks reference libraries (github.com/standard-webhooks/standard-webhooks,
    // commit b2fa7b87): libraries/{python,javascript,go,ruby,php,csharp} "sign function" tests, and
    // libraries/rust/src/lib.rs test_sign. Both also recomputed with openssl (key = base64 -d of the secret):
    //   printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' \
    //     | openssl dgst -sha256 -mac HMAC -macopt hexkey:<key as hex> -binary | base64
    private static final String SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    private static final String ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    private static final long TIMESTAMP = 1614265330L;
    private static final byte[] BODY = utf8("{\"test\": 2432232314}");
    private static final String SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    private static final String RUST_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    private static final String RUST_ID = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    private static final long RUST_TIMESTAMP = 1649367553L;
    private static final byte[] RUST_BODY = utf8("{\"email\":\"test@example.com\",\"username\":\"test_user\"}");
    private static final String RUST_SIGNATURE = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";

    /** Another v1 signature from the libraries' multi-signature tests: well-formed, made with no key of ours. */
    private static final String FOREIGN = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";

    private static final Instant NOW = Instant.ofEpochSecond(TIMESTAMP);
    private static final Duration TOLERANCE = WebhookVerifier.DEFAULT_TOLERANCE;

    @Test
    void signsTheReferenceLibrariesVectors() {
        assertEquals(SIGNATURE, StandardWebhooks.sign(List.of(SECRET), ID, TIMESTAMP, BODY));
        assertEquals(RUST_SIGNATURE, StandardWebhooks.sign(List.of(RUST_SECRET), RUST_ID, RUST_TIMESTAMP, RUST_BODY));
    }

    @Test
    void verifiesTheReferenceLibrariesVectorsAndYieldsTheWebhookId() {
        assertEquals(new Verified(ID), verify(List.of(SECRET), headers(ID, TIMESTAMP, SIGNATURE), BODY, NOW));
        assertEquals(new Verified(RUST_ID), verify(List.of(RUST_SECRET), headers(RUST_ID, RUST_TIMESTAMP, RUST_SIGNATURE),
                RUST_BODY, Instant.ofEpochSecond(RUST_TIMESTAMP)));
    }

    @Test
    void emitsTheThreeHeadersWithOneV1SignaturePerSecretInOrder() {
        Map<String, String> headers = StandardWebhooks.headers(List.of(RUST_SECRET, SECRET), ID, TIMESTAMP, BODY);
        assertEquals(List.of("webhook-id", "webhook-timestamp", "webhook-signature"), List.copyOf(headers.keySet()));
        assertEquals(ID, headers.get("webhook-id"));
        assertEquals("1614265330", headers.get("webhook-timestamp"));
        String[] signatures = headers.get("webhook-signature").split(" ");
        assertEquals(2, signatures.length);
        assertEquals(SIGNATURE, signatures[1]);
        assertTrue(signatures[0].startsWith("v1,") && !signatures[0].equals(SIGNATURE));
    }

    @Test
    void verifiesWithEitherSecretDuringARotation() {
        String bothSigned = StandardWebhooks.sign(List.of("whsec_bmV3LWtleS1uZXcta2V5LW5ldy1rZXk=", SECRET), ID, TIMESTAMP, BODY);
        String oldOnly = StandardWebhooks.sign(List.of(SECRET), ID, TIMESTAMP, BODY);
        List<String> receiverHasNewAndOld = List.of("whsec_bmV3LWtleS1uZXcta2V5LW5ldy1rZXk=", SECRET);
        assertEquals(new Verified(ID), verify(receiverHasNewAndOld, headers(ID, TIMESTAMP, bothSigned), BODY, NOW));
        assertEquals(new Verified(ID), verify(receiverHasNewAndOld, headers(ID, TIMESTAMP, oldOnly), BODY, NOW));
        assertEquals(new Verified(ID), verify(List.of(SECRET), headers(ID, TIMESTAMP, bothSigned), BODY, NOW));
    }

    @Test
    void findsTheGoodSignatureAmongOthersAndIgnoresVersionsOtherThanV1() {
        String mixed = String.join(" ", FOREIGN, "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==",
                "v1,", "v1,not*base64", "garbage", SIGNATURE, FOREIGN);
        assertEquals(new Verified(ID), verify(List.of(SECRET), headers(ID, TIMESTAMP, mixed), BODY, NOW));
        // The right MAC under another version label is not a v1 signature.
        String relabelled = "v2," + SIGNATURE.substring(3);
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(List.of(SECRET), headers(ID, TIMESTAMP, relabelled), BODY, NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(SECRET), headers(ID, TIMESTAMP, FOREIGN + " " + relabelled), BODY, NOW));
    }

    @Test
    void refusesATimestampBeyondTheToleranceEitherWay() {
        Map<String, String> headers = headers(ID, TIMESTAMP, SIGNATURE);
        assertEquals(new Verified(ID), verify(List.of(SECRET), headers, BODY, NOW.plusSeconds(300)));
        assertEquals(new Verified(ID), verify(List.of(SECRET), headers, BODY, NOW.minusSeconds(300)));
        assertEquals(new Refused(Reason.STALE), verify(List.of(SECRET), headers, BODY, NOW.plusSeconds(301)));
        assertEquals(new Refused(Reason.STALE), verify(List.of(SECRET), headers, BODY, NOW.minusSeconds(301)));
        assertEquals(new Verified(ID), WebhookVerifier.verify(WebhookScheme.STANDARD, List.of(SECRET), request(headers, BODY)::header,
                BODY, NOW.plusSeconds(3600), Duration.ofHours(1)));
    }

    @Test
    void refusesAnyChangeToTheIdTimestampOrBody() {
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(SECRET), headers("msg_other", TIMESTAMP, SIGNATURE), BODY, NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(SECRET), headers(ID, TIMESTAMP + 1, SIGNATURE), BODY, NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(SECRET), headers(ID, TIMESTAMP, SIGNATURE), utf8("{\"test\": 2432232315}"), NOW));
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(RUST_SECRET), headers(ID, TIMESTAMP, SIGNATURE), BODY, NOW));
    }

    @Test
    void refusesMissingOrMalformedHeaders() {
        Map<String, String> good = headers(ID, TIMESTAMP, SIGNATURE);
        for (String name : good.keySet()) {
            Map<String, String> missing = new LinkedHashMap<>(good);
            missing.remove(name);
            assertEquals(new Refused(Reason.MISSING_HEADER), verify(List.of(SECRET), missing, BODY, NOW), name);
            missing.put(name, " ");
            assertEquals(new Refused(Reason.MISSING_HEADER), verify(List.of(SECRET), missing, BODY, NOW), name);
        }
        for (String timestamp : List.of("hello", "-1614265330", "1614265330.0", "1e9", "9999999999999999999")) {
            Map<String, String> bad = new LinkedHashMap<>(good);
            bad.put("webhook-timestamp", timestamp);
            assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(List.of(SECRET), bad, BODY, NOW), timestamp);
        }
        assertEquals(new Refused(Reason.MALFORMED_HEADER), verify(List.of(SECRET), headers(ID, TIMESTAMP, "v1,"), BODY, NOW));
    }

    @Test
    void decodesWhsecSecretsWithOrWithoutPaddingAndTakesOtherSecretsAsUtf8() {
        // "MfKQ...LaS" needs one '=' of padding, as in the Python library's test_signature_verification_with_unpadded_secret.
        String padded = StandardWebhooks.sign(List.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS="), ID, TIMESTAMP, BODY);
        assertEquals(padded, StandardWebhooks.sign(List.of("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"), ID, TIMESTAMP, BODY));
        // Without the prefix the secret is its UTF-8 bytes, not base64 (the reference libraries would decode it):
        //   printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' \
        //     | openssl dgst -sha256 -hmac 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' -binary | base64
        String plain = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        assertEquals("v1,ELhqG0Ku1gwOc1f4jyKdp3SFGFLAOdJ9bvpWLciCakI=", StandardWebhooks.sign(List.of(plain), ID, TIMESTAMP, BODY));
        assertEquals(new Refused(Reason.MISMATCH), verify(List.of(plain), headers(ID, TIMESTAMP, SIGNATURE), BODY, NOW));
    }

    @Test
    void refusesForWantOfAUsableSecret() {
        Map<String, String> headers = headers(ID, TIMESTAMP, SIGNATURE);
        assertEquals(new Refused(Reason.NO_SECRET), verify(List.of(), headers, BODY, NOW));
        assertEquals(new Refused(Reason.NO_SECRET), verify(null, headers, BODY, NOW));
        assertEquals(new Refused(Reason.NO_SECRET), verify(Arrays.asList(null, "", "whsec_", "whsec_!!not base64"), headers, BODY, NOW));
        // An unusable previous secret does not stand in the way of the current one.
        assertEquals(new Verified(ID), verify(Arrays.asList(SECRET, null, "whsec_"), headers, BODY, NOW));
    }

    @Test
    void refusesToSignWithoutAUsableSecretOrWithADottedId() {
        assertThrows(IllegalArgumentException.class, () -> StandardWebhooks.sign(List.of(), ID, TIMESTAMP, BODY));
        IllegalArgumentException unusable = assertThrows(IllegalArgumentException.class,
                () -> StandardWebhooks.sign(List.of(SECRET, "whsec_%%secret%%"), ID, TIMESTAMP, BODY));
        assertEquals("signing secret 1 is unusable: it must be non-empty, and after whsec_ non-empty base64", unusable.getMessage());
        assertFalse(unusable.getMessage().contains("%%secret%%"));
        assertThrows(IllegalArgumentException.class, () -> StandardWebhooks.sign(List.of(SECRET), "msg.1", TIMESTAMP, BODY));
        assertThrows(IllegalArgumentException.class, () -> StandardWebhooks.requireUsable("whsec_"));
        StandardWebhooks.requireUsable(SECRET);
    }

    private static WebhookVerification verify(List<String> secrets, Map<String, String> headers, byte[] body, Instant now) {
        ApiRequest request = request(headers, body);
        return WebhookVerifier.verify(WebhookScheme.STANDARD, secrets, request::header, request.body(), now, TOLERANCE);
    }

    private static Map<String, String> headers(String id, long timestamp, String signature) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Webhook-Id", id);
        headers.put("Webhook-Timestamp", Long.toString(timestamp));
        headers.put("Webhook-Signature", signature);
        return headers;
    }

    /** As the HTTP adapters build it: header names lower-cased, so any case the sender used is found. */
    static ApiRequest request(Map<String, String> headers, byte[] body) {
        Map<String, String> lower = new LinkedHashMap<>();
        headers.forEach((name, value) -> lower.put(name.toLowerCase(Locale.ROOT), value));
        return new ApiRequest("POST", "/webhooks/t/i/h", Map.of(), lower, Map.of(), body);
    }

    static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
