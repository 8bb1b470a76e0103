package dev.runner.security;

import dev.runner.http.ApiRequest;
import dev.runner.security.WebhookVerification.Reason;
import dev.runner.security.WebhookVerification.Refused;
import dev.runner.security.WebhookVerification.Verified;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Whatever a sender puts in the headers and body, the verifier answers and never throws, and it never verifies a
 * delivery that was not signed over exactly these bytes with one of the integration's keys. Signed deliveries are
 * made here with an HMAC written independently of the production code.
 */
class WebhookVerifierFuzzTest {

    /** Calls of the properties below, rejected samples included; jqwik's own report gives them per property. */
    private static final AtomicLong TRIED = new AtomicLong();
    private static final Duration TOLERANCE = WebhookVerifier.DEFAULT_TOLERANCE;
    private static final List<String> SCHEME_HEADERS = List.of("webhook-id", "webhook-timestamp", "webhook-signature",
            "X-Hub-Signature-256", "X-GitHub-Delivery", "Stripe-Signature", "X-Shopify-Hmac-Sha256", "X-Shopify-Webhook-Id");

    @AfterContainer
    static void reportInputsTried() {
        System.out.println("WebhookVerifierFuzzTest: " + TRIED.get() + " inputs tried");
    }

    @Property(tries = 3000)
    void answersAnyHeadersAndBodyWithoutThrowingAndVerifiesNoneOfThem(
            @ForAll WebhookScheme scheme, @ForAll("anySecrets") List<String> secrets,
            @ForAll("anyHeaders") Map<String, String> headers, @ForAll("bodies") byte[] body,
            @ForAll("instants") Instant now, @ForAll("tolerances") Duration tolerance) {
        TRIED.incrementAndGet();
        ApiRequest request = request(headers, body);
        WebhookVerification verification = WebhookVerifier.verify(scheme, secrets, request::header, request.body(), now, tolerance);
        assertInstanceOf(Refused.class, verification, () -> scheme + " verified unsigned headers " + headers);
    }

    @Property(tries = 2000)
    void aSignedDeliveryVerifiesWithItsKeyAndWithNoOther(
            @ForAll WebhookScheme scheme, @ForAll("secrets") Secret right, @ForAll("secrets") Secret wrong,
            @ForAll("ids") String id, @ForAll("bodies") byte[] body, @ForAll("nows") long now,
            @ForAll("offsetsWithinTolerance") long offset) {
        TRIED.incrementAndGet();
        Map<String, String> headers = sign(scheme, right.key(scheme), id, now + offset, body);
        Verified expected = new Verified(scheme == WebhookScheme.STRIPE ? null : id);
        assertEquals(expected, verify(scheme, List.of(right.text()), headers, body, now));
        assertEquals(expected, verify(scheme, List.of(wrong.text(), right.text()), headers, body, now));
        Assume.that(!sameHmacKey(right.key(scheme), wrong.key(scheme)));
        assertEquals(new Refused(Reason.MISMATCH), verify(scheme, List.of(wrong.text()), headers, body, now));
    }

    @Property(tries = 2000)
    void anyChangeToWhatIsSignedIsRefused(
            @ForAll WebhookScheme scheme, @ForAll("secrets") Secret secret, @ForAll("ids") String id,
            @ForAll("bodies") byte[] body, @ForAll("nows") long now, @ForAll("offsetsWithinTolerance") long offset,
            @ForAll Tampering tampering, @ForAll("positions") int position) {
        TRIED.incrementAndGet();
        Assume.that(tampering.appliesTo(scheme));
        long timestamp = now + offset;
        byte[] mac = mac(scheme, secret.key(scheme), id, timestamp, body);
        Map<String, String> headers = switch (tampering) {
            case BODY -> headers(scheme, mac, id, timestamp);
            case ID -> headers(scheme, mac, id + "x", timestamp);
            case TIMESTAMP -> headers(scheme, mac, id, timestamp + 1 + position % 300);
            case SIGNATURE -> headers(scheme, flipOrAppend(mac, position), id, timestamp);
        };
        byte[] sent = tampering == Tampering.BODY ? flipOrAppend(body, position) : body;
        assertInstanceOf(Refused.class, verify(scheme, List.of(secret.text()), headers, sent, now), tampering::name);
    }

    @Property(tries = 1000)
    void runnersSignerAgreesWithAnIndependentHmac(@ForAll("secrets") Secret first, @ForAll("secrets") Secret second,
                                                  @ForAll("ids") String id, @ForAll("nows") long timestamp,
                                                  @ForAll("bodies") byte[] body) {
        TRIED.incrementAndGet();
        Assume.that(id.indexOf('.') < 0);
        String expected = sign(WebhookScheme.STANDARD, first.key(WebhookScheme.STANDARD), id, timestamp, body).get("webhook-signature")
                + " " + sign(WebhookScheme.STANDARD, second.key(WebhookScheme.STANDARD), id, timestamp, body).get("webhook-signature");
        assertEquals(expected, StandardWebhooks.sign(List.of(first.text(), second.text()), id, timestamp, body));
    }

    /** What a replay may change; each scheme refuses a change to what its MAC covers. */
    enum Tampering {
        BODY, ID, TIMESTAMP, SIGNATURE;

        boolean appliesTo(WebhookScheme scheme) {
            return switch (this) {
                case BODY, SIGNATURE -> true;
                case ID -> scheme == WebhookScheme.STANDARD;
                case TIMESTAMP -> scheme.signsTime();
            };
        }
    }

    /** A webhook secret as configured, and the HMAC key it stands for under Standard Webhooks. */
    record Secret(String text, byte[] standardKey) {
        byte[] key(WebhookScheme scheme) {
            return scheme == WebhookScheme.STANDARD ? standardKey : text.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "Secret[" + text + "]";
        }
    }

    @Provide
    Arbitrary<Secret> secrets() {
        Arbitrary<Secret> plain = Arbitraries.strings().all().ofMinLength(1).ofMaxLength(80)
                .filter(text -> !text.startsWith(StandardWebhooks.SECRET_PREFIX))
                .map(text -> new Secret(text, text.getBytes(StandardCharsets.UTF_8)));
        Arbitrary<Secret> encoded = Combinators.combine(Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(80),
                        Arbitraries.of(true, false))
                .as((key, padded) -> {
                    String base64 = Base64.getEncoder().encodeToString(key);
                    return new Secret(StandardWebhooks.SECRET_PREFIX + (padded ? base64 : base64.replace("=", "")), key);
                });
        return Arbitraries.oneOf(plain, encoded);
    }

    @Provide
    Arbitrary<List<String>> anySecrets() {
        Arbitrary<String> secret = Arbitraries.oneOf(secrets().map(Secret::text), Arbitraries.just(""),
                Arbitraries.just(StandardWebhooks.SECRET_PREFIX), Arbitraries.strings().all().ofMaxLength(40)
                        .map(text -> StandardWebhooks.SECRET_PREFIX + text));
        return secret.injectNull(0.1).list().ofMaxSize(3);
    }

    @Provide
    Arbitrary<Map<String, String>> anyHeaders() {
        Arbitrary<String> name = Arbitraries.oneOf(
                Arbitraries.of(SCHEME_HEADERS).flatMap(WebhookVerifierFuzzTest::anyCase),
                Arbitraries.strings().all().ofMaxLength(30));
        Arbitrary<String> value = Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(200),
                Arbitraries.strings().ascii().ofMaxLength(200),
                timestamps(),
                randomBytes().map(bytes -> "v1," + Base64.getEncoder().encodeToString(bytes))
                        .list().ofMinSize(1).ofMaxSize(4).map(entries -> String.join(" ", entries)),
                Combinators.combine(timestamps(), randomBytes().map(HexFormat.of()::formatHex).list().ofMaxSize(3))
                        .as((t, v1s) -> "t=" + t + v1s.stream().map(v1 -> ",v1=" + v1).reduce("", String::concat)),
                randomBytes().map(bytes -> "sha256=" + HexFormat.of().formatHex(bytes)),
                randomBytes().map(Base64.getEncoder()::encodeToString));
        return Arbitraries.maps(name, value).ofMaxSize(8);
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        return Arbitraries.oneOf(
                Arbitraries.bytes().array(byte[].class).ofMaxSize(2048),
                Arbitraries.strings().all().ofMaxLength(500).map(text -> text.getBytes(StandardCharsets.UTF_8)),
                Arbitraries.strings().all().ofMaxLength(200).map(text -> text.getBytes(StandardCharsets.UTF_16)));
    }

    @Provide
    Arbitrary<String> ids() {
        return Arbitraries.oneOf(Arbitraries.strings().all().ofMinLength(1).ofMaxLength(100),
                        Arbitraries.strings().alpha().numeric().withChars("_-").ofMinLength(1).ofMaxLength(40))
                .filter(id -> !id.isBlank());
    }

    @Provide
    Arbitrary<Instant> instants() {
        return Arbitraries.oneOf(nows().map(Instant::ofEpochSecond),
                Arbitraries.of(Instant.MIN, Instant.EPOCH, Instant.MAX));
    }

    @Provide
    static Arbitrary<Long> nows() {
        return Arbitraries.longs().between(1_600_000_000L, 1_900_000_000L);
    }

    @Provide
    Arbitrary<Long> offsetsWithinTolerance() {
        return Arbitraries.longs().between(-TOLERANCE.toSeconds(), TOLERANCE.toSeconds());
    }

    @Provide
    Arbitrary<Duration> tolerances() {
        return Arbitraries.oneOf(Arbitraries.of(Duration.ZERO, TOLERANCE),
                Arbitraries.longs().between(0, 400_000_000L).map(Duration::ofSeconds));
    }

    @Provide
    Arbitrary<Integer> positions() {
        return Arbitraries.integers().between(0, Integer.MAX_VALUE);
    }

    private static Arbitrary<String> timestamps() {
        return Arbitraries.oneOf(nows().map(String::valueOf), Arbitraries.longs().map(String::valueOf),
                Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(25));
    }

    private static Arbitrary<byte[]> randomBytes() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(48);
    }

    private static Arbitrary<String> anyCase(String name) {
        return Arbitraries.of(name, name.toLowerCase(Locale.ROOT), name.toUpperCase(Locale.ROOT));
    }

    private static WebhookVerification verify(WebhookScheme scheme, List<String> secrets, Map<String, String> headers,
                                              byte[] body, long now) {
        ApiRequest request = request(headers, body);
        return WebhookVerifier.verify(scheme, secrets, request::header, request.body(), Instant.ofEpochSecond(now), TOLERANCE);
    }

    private static ApiRequest request(Map<String, String> headers, byte[] body) {
        return StandardWebhooksTest.request(headers, body);
    }

    /** The headers a sender of {@code scheme} attaches to a delivery signed with {@code key}. */
    private static Map<String, String> sign(WebhookScheme scheme, byte[] key, String id, long timestamp, byte[] body) {
        return headers(scheme, mac(scheme, key, id, timestamp, body), id, timestamp);
    }

    private static byte[] mac(WebhookScheme scheme, byte[] key, String id, long timestamp, byte[] body) {
        return switch (scheme) {
            case STANDARD -> hmac(key, concat((id + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8), body));
            case STRIPE -> hmac(key, concat((timestamp + ".").getBytes(StandardCharsets.UTF_8), body));
            case GITHUB, SHOPIFY -> hmac(key, body);
        };
    }

    private static Map<String, String> headers(WebhookScheme scheme, byte[] mac, String id, long timestamp) {
        Map<String, String> headers = new LinkedHashMap<>();
        switch (scheme) {
            case STANDARD -> {
                headers.put("webhook-id", id);
                headers.put("webhook-timestamp", Long.toString(timestamp));
                headers.put("webhook-signature", "v1," + Base64.getEncoder().encodeToString(mac));
            }
            case GITHUB -> {
                headers.put("X-Hub-Signature-256", "sha256=" + HexFormat.of().formatHex(mac));
                headers.put("X-GitHub-Delivery", id);
            }
            case STRIPE -> headers.put("Stripe-Signature", "t=" + timestamp + ",v1=" + HexFormat.of().formatHex(mac));
            case SHOPIFY -> {
                headers.put("X-Shopify-Hmac-Sha256", Base64.getEncoder().encodeToString(mac));
                headers.put("X-Shopify-Webhook-Id", id);
            }
        }
        return headers;
    }

    private static byte[] hmac(byte[] key, byte[] content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * HMAC pads a key shorter than its 64-byte block with zeros and hashes a longer one, so distinct byte strings
     * can be one key ("a" and "a\0"); "another key" must be another key after that.
     */
    private static boolean sameHmacKey(byte[] a, byte[] b) {
        return Arrays.equals(blockKey(a), blockKey(b));
    }

    private static byte[] blockKey(byte[] key) {
        try {
            return Arrays.copyOf(key.length > 64 ? MessageDigest.getInstance("SHA-256").digest(key) : key, 64);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] flipOrAppend(byte[] bytes, int position) {
        if (bytes.length == 0) {
            return new byte[] {(byte) position};
        }
        byte[] changed = bytes.clone();
        changed[position % changed.length] ^= (byte) (1 << (position % 8));
        return changed;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] joined = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, joined, a.length, b.length);
        return joined;
    }
}
