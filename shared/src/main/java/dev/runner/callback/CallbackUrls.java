package dev.runner.callback;

import dev.runner.log.Log;
import dev.runner.security.Hmac;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The callback URL of an item's attempt (docs/handler-contract.md, callbacks): {@code {base}/callbacks/{token}}, where the token
 * is {@code itemId.attempt.expiresAt.signature} and the signature an HMAC-SHA256, under a key only Runner holds, of the
 * other three. It is the credential: unguessable, bound to one item and one attempt, and expiring; a token Runner did not
 * sign is unknown, whatever it names, and the check takes the same time however much of the signature matches.
 *
 * <p>The key's secret may hold several keys, separated by whitespace: the first signs, any verifies; it is read again when
 * what a function holds is older than {@link #KEY_MAX_AGE}. That is how the key is rotated without a restart and without
 * refusing the callbacks of items already waiting (docs/security.md, callback URLs): the new key added after the old, then
 * put first, then the old one dropped, each step at least {@link #KEY_MAX_AGE} after the one before.
 */
public final class CallbackUrls {

    /** The route that takes callbacks (template.yaml's WebhookFunction, the OpenAPI document). */
    public static final String ROUTE = "/callbacks/{token}";

    private static final Log LOG = Log.of(CallbackUrls.class);

    private static final Pattern TOKEN = Pattern.compile(
            "([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\\.([1-9][0-9]{0,4})\\.([1-9][0-9]{0,11})\\.([A-Za-z0-9_-]{43})");
    private static final byte[] CONTEXT = "runner-callback.".getBytes(StandardCharsets.US_ASCII);
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    /** What a token names once its signature is checked. */
    public sealed interface Verdict {
        /** Signed by Runner for this item's attempt; {@code expired} when past its time. */
        record Signed(UUID itemId, int attempt, Instant expiresAt, boolean expired) implements Verdict {}

        /** Not a token Runner signed (malformed, or its signature does not match). */
        record Unknown() implements Verdict {}
    }

    /** How old the keys a function holds may be: a rotation's steps reach every function within it. */
    public static final Duration KEY_MAX_AGE = Duration.ofMinutes(5);

    /** Keys as read: the secret's value, and the keys it holds (the first signs, every one verifies). */
    private record Keys(String value, List<byte[]> keys) {
        static final Keys NONE = new Keys(null, List.of());

        static Keys of(String value) {
            if (value == null) {
                return NONE;
            }
            List<String> keys = List.of(value.strip().split("\\s+"));
            if (keys.stream().anyMatch(k -> k.length() < 16)) {
                throw new IllegalArgumentException("each callback key must have at least 16 characters");
            }
            return new Keys(value, keys.stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList());
        }
    }

    private final String base;
    /** The callback key's value as it is now (the secret, re-read past {@link #KEY_MAX_AGE}); null = none. */
    private final Supplier<String> keySource;
    private volatile Keys keys;
    private final Clock clock;

    /**
     * @param base where the callback route is served from outside (RUNNER_CALLBACK_BASE_URL), without a trailing slash
     * @param key  the callback key (RUNNER_CALLBACK_KEY_SECRET's value): never a key handlers hold; during a rotation the
     *             new key, then the old, separated by whitespace; null = none, when no base is set either (no URL is given
     *             out, and every token is unknown)
     */
    public CallbackUrls(String base, String key, Clock clock) {
        this(base, () -> key, clock);
    }

    /** @param keySource the callback key's value as it is now, asked at each signing and check (read at once here) */
    public CallbackUrls(String base, Supplier<String> keySource, Clock clock) {
        Keys keys = Keys.of(keySource.get());
        if (keys.value() == null && base != null) {
            throw new IllegalStateException("RUNNER_CALLBACK_BASE_URL is set, but no callback key: set RUNNER_CALLBACK_KEY_SECRET");
        }
        if (base != null && !base.startsWith("https://") && !base.startsWith("http://")) {
            throw new IllegalStateException("RUNNER_CALLBACK_BASE_URL must be an http(s) URL: " + base);
        }
        this.base = base == null ? null : base.replaceAll("/+$", "");
        this.keySource = keySource;
        this.keys = keys;
        this.clock = clock;
    }

    /** Whether URLs can be given out: a base is configured. */
    public boolean issuing() {
        return base != null;
    }

    /** The URL for {@code itemId}'s attempt {@code attempt}, valid from now for {@code valid} (rounded up to the second). */
    public URI url(UUID itemId, int attempt, Duration valid) {
        return url(itemId, attempt, Instant.ofEpochSecond(clock.instant().plus(valid).getEpochSecond() + 1));
    }

    /** The URL for {@code itemId}'s attempt {@code attempt}, valid until {@code expiresAt}. */
    public URI url(UUID itemId, int attempt, Instant expiresAt) {
        if (base == null) {
            throw new IllegalStateException("RUNNER_CALLBACK_BASE_URL is not set");
        }
        return URI.create(base + "/callbacks/" + token(itemId, attempt, expiresAt));
    }

    /** The token part of {@link #url}. */
    public String token(UUID itemId, int attempt, Instant expiresAt) {
        String signed = itemId + "." + attempt + "." + expiresAt.getEpochSecond();
        return signed + "." + ENCODER.encodeToString(signature(keys().getFirst(), signed));
    }

    /** What {@code token} names, as of now: its signature checked in constant time before anything it says is believed. */
    public Verdict verify(String token) {
        Instant now = clock.instant();
        List<byte[]> keys = keys();
        if (token == null || keys.isEmpty()) {
            return new Verdict.Unknown();
        }
        var match = TOKEN.matcher(token);
        if (!match.matches()) {
            return new Verdict.Unknown();
        }
        String signed = match.group(1) + "." + match.group(2) + "." + match.group(3);
        byte[] given = DECODER.decode(match.group(4));
        boolean matched = false;
        for (byte[] key : keys) {
            // Every key is tried, matched or not: the time taken says neither whether nor which one matched.
            matched |= MessageDigest.isEqual(signature(key, signed), given);
        }
        if (!matched) {
            return new Verdict.Unknown();
        }
        Instant expiresAt = Instant.ofEpochSecond(Long.parseLong(match.group(3)));
        return new Verdict.Signed(UUID.fromString(match.group(1)), Integer.parseInt(match.group(2)), expiresAt, !now.isBefore(expiresAt));
    }

    /** The keys as the source has them now, parsed again only when its value changed; the last good ones if it went bad. */
    private List<byte[]> keys() {
        Keys held = keys;
        String now = keySource.get();
        if (now == null || now.equals(held.value())) {
            return held.keys();
        }
        try {
            Keys read = Keys.of(now);
            keys = read;
            return read.keys();
        } catch (IllegalArgumentException e) {
            LOG.warn("the callback key's secret holds a key too short; keeping the keys read before", "error", e.getMessage());
            return held.keys();
        }
    }

    private static byte[] signature(byte[] key, String signed) {
        return Hmac.sha256(key, CONTEXT, signed.getBytes(StandardCharsets.US_ASCII));
    }
}
