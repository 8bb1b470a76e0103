package dev.runner.security;

import dev.runner.security.WebhookVerification.Reason;
import dev.runner.security.WebhookVerification.Refused;
import dev.runner.security.WebhookVerification.Verified;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Checks an incoming webhook's signature under its integration type's {@link WebhookScheme}. Every input a sender
 * controls (headers, body) yields a {@link WebhookVerification}, never an exception; signatures are compared in
 * constant time ({@link MessageDigest#isEqual}). Several secrets may be given, the current and the previous one
 * during a rotation: a delivery signed with any of them verifies.
 */
public final class WebhookVerifier {

    public static final String GITHUB_SIGNATURE_HEADER = "X-Hub-Signature-256";
    public static final String GITHUB_DELIVERY_HEADER = "X-GitHub-Delivery";
    public static final String STRIPE_SIGNATURE_HEADER = "Stripe-Signature";
    public static final String SHOPIFY_SIGNATURE_HEADER = "X-Shopify-Hmac-Sha256";
    public static final String SHOPIFY_WEBHOOK_ID_HEADER = "X-Shopify-Webhook-Id";
    /** The tolerance the Standard Webhooks libraries and Stripe apply by default. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

    private static final String GITHUB_PREFIX = "sha256=";
    /** Unix seconds as digits only; 15 of them reach year 31 million and keep the arithmetic far from overflow. */
    private static final Pattern UNIX_SECONDS = Pattern.compile("[0-9]{1,15}");

    private static final Refused NO_SECRET = new Refused(Reason.NO_SECRET);
    private static final Refused MISSING_HEADER = new Refused(Reason.MISSING_HEADER);
    private static final Refused MALFORMED_HEADER = new Refused(Reason.MALFORMED_HEADER);
    private static final Refused STALE = new Refused(Reason.STALE);
    private static final Refused MISMATCH = new Refused(Reason.MISMATCH);

    private WebhookVerifier() {}

    /**
     * @param secrets   the tenant integration's webhook secrets, current first; null or unusable entries are skipped
     * @param headers   a header's value by name, whatever its case, or null when absent: {@code request::header} of
     *                  an {@link dev.runner.http.ApiRequest}, or a lookup over an ingest message's attributes
     * @param body      the raw body, exactly the bytes received
     * @param tolerance how far the signed time may be from {@code now}, either way (schemes that sign a time)
     */
    public static WebhookVerification verify(WebhookScheme scheme, List<String> secrets, Function<String, String> headers,
                                             byte[] body, Instant now, Duration tolerance) {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(now, "now");
        if (tolerance == null || tolerance.isNegative()) {
            throw new IllegalArgumentException("tolerance must be zero or more: " + tolerance);
        }
        List<byte[]> keys = keys(scheme, secrets);
        if (keys.isEmpty()) {
            return NO_SECRET;
        }
        return switch (scheme) {
            case STANDARD -> standard(keys, headers, body, now, tolerance);
            case GITHUB -> github(keys, headers, body);
            case STRIPE -> stripe(keys, headers, body, now, tolerance);
            case SHOPIFY -> shopify(keys, headers, body);
        };
    }

    /** Only Standard Webhooks decodes {@code whsec_} secrets; Stripe's also start so but key its MAC as they are. */
    private static List<byte[]> keys(WebhookScheme scheme, List<String> secrets) {
        List<byte[]> keys = new ArrayList<>();
        if (secrets == null) {
            return keys;
        }
        for (String secret : secrets) {
            byte[] key = scheme == WebhookScheme.STANDARD ? StandardWebhooks.key(secret) : utf8Key(secret);
            if (key != null) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static byte[] utf8Key(String secret) {
        return secret == null || secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8);
    }

    private static WebhookVerification standard(List<byte[]> keys, Function<String, String> headers, byte[] body,
                                                Instant now, Duration tolerance) {
        String id = headers.apply(StandardWebhooks.ID_HEADER);
        String timestampHeader = headers.apply(StandardWebhooks.TIMESTAMP_HEADER);
        String signatureHeader = headers.apply(StandardWebhooks.SIGNATURE_HEADER);
        if (isBlank(id) || isBlank(timestampHeader) || isBlank(signatureHeader)) {
            return MISSING_HEADER;
        }
        Long timestamp = unixSeconds(timestampHeader);
        if (timestamp == null) {
            return MALFORMED_HEADER;
        }
        List<byte[]> presented = new ArrayList<>();
        for (String entry : signatureHeader.trim().split(" +")) {
            int comma = entry.indexOf(',');
            if (comma > 0 && entry.substring(0, comma).equals(StandardWebhooks.VERSION)) {
                addIfDecoded(presented, entry.substring(comma + 1), Encoding.BASE64);
            }
        }
        if (presented.isEmpty()) {
            return MALFORMED_HEADER;
        }
        if (!withinTolerance(timestamp, now, tolerance)) {
            return STALE;
        }
        for (byte[] key : keys) {
            if (anyEqual(StandardWebhooks.mac(key, id, timestamp, body), presented)) {
                return new Verified(id);
            }
        }
        return MISMATCH;
    }

    private static WebhookVerification github(List<byte[]> keys, Function<String, String> headers, byte[] body) {
        String header = headers.apply(GITHUB_SIGNATURE_HEADER);
        if (isBlank(header)) {
            return MISSING_HEADER;
        }
        String value = header.trim();
        List<byte[]> presented = new ArrayList<>(1);
        if (value.startsWith(GITHUB_PREFIX)) {
            addIfDecoded(presented, value.substring(GITHUB_PREFIX.length()), Encoding.HEX);
        }
        return bodyOnly(keys, presented, body, headers.apply(GITHUB_DELIVERY_HEADER));
    }

    private static WebhookVerification shopify(List<byte[]> keys, Function<String, String> headers, byte[] body) {
        String header = headers.apply(SHOPIFY_SIGNATURE_HEADER);
        if (isBlank(header)) {
            return MISSING_HEADER;
        }
        List<byte[]> presented = new ArrayList<>(1);
        addIfDecoded(presented, header.trim(), Encoding.BASE64);
        return bodyOnly(keys, presented, body, headers.apply(SHOPIFY_WEBHOOK_ID_HEADER));
    }

    /** GitHub and Shopify sign the body alone: no time to check, and the identity header is only a hint. */
    private static WebhookVerification bodyOnly(List<byte[]> keys, List<byte[]> presented, byte[] body, String deliveryId) {
        if (presented.isEmpty()) {
            return MALFORMED_HEADER;
        }
        for (byte[] key : keys) {
            if (anyEqual(Hmac.sha256(key, body), presented)) {
                return new Verified(isBlank(deliveryId) ? null : deliveryId);
            }
        }
        return MISMATCH;
    }

    /** {@code t=<unix seconds>} once, then {@code v1=<hex>} once per secret Stripe signs with; other schemes (v0) ignored. */
    private static WebhookVerification stripe(List<byte[]> keys, Function<String, String> headers, byte[] body,
                                              Instant now, Duration tolerance) {
        String header = headers.apply(STRIPE_SIGNATURE_HEADER);
        if (isBlank(header)) {
            return MISSING_HEADER;
        }
        Long timestamp = null;
        int timestamps = 0;
        List<byte[]> presented = new ArrayList<>();
        for (String item : header.split(",")) {
            int equals = item.indexOf('=');
            if (equals < 0) {
                continue;
            }
            String name = item.substring(0, equals).trim();
            String value = item.substring(equals + 1).trim();
            if (name.equals("t")) {
                timestamps++;
                timestamp = unixSeconds(value);
            } else if (name.equals("v1")) {
                addIfDecoded(presented, value, Encoding.HEX);
            }
        }
        if (timestamps != 1 || timestamp == null || presented.isEmpty()) {
            return MALFORMED_HEADER;
        }
        if (!withinTolerance(timestamp, now, tolerance)) {
            return STALE;
        }
        byte[] prefix = (timestamp + ".").getBytes(StandardCharsets.UTF_8);
        for (byte[] key : keys) {
            if (anyEqual(Hmac.sha256(key, prefix, body), presented)) {
                return new Verified(null);
            }
        }
        return MISMATCH;
    }

    private enum Encoding { BASE64, HEX }

    /** Adds the decoded signature; one that does not decode is skipped, as it cannot match. */
    private static void addIfDecoded(List<byte[]> presented, String text, Encoding encoding) {
        try {
            byte[] bytes = switch (encoding) {
                case BASE64 -> Base64.getDecoder().decode(text);
                case HEX -> HexFormat.of().parseHex(text);
            };
            if (bytes.length > 0) {
                presented.add(bytes);
            }
        } catch (IllegalArgumentException e) {
            // not a signature of this encoding
        }
    }

    /** Constant time per comparison; stopping at a match tells a caller only what the answer tells anyway. */
    private static boolean anyEqual(byte[] expected, List<byte[]> presented) {
        for (byte[] candidate : presented) {
            if (MessageDigest.isEqual(expected, candidate)) {
                return true;
            }
        }
        return false;
    }

    private static Long unixSeconds(String text) {
        String trimmed = text.trim();
        return UNIX_SECONDS.matcher(trimmed).matches() ? Long.parseLong(trimmed) : null;
    }

    private static boolean withinTolerance(long timestampSeconds, Instant now, Duration tolerance) {
        return Math.abs(now.getEpochSecond() - timestampSeconds) <= tolerance.toSeconds();
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
