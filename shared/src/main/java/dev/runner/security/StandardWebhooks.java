package dev.runner.security;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The Standard Webhooks signature (specification 1.0.0), the one Runner both verifies on incoming
 * webhooks and signs its own handler calls with. The MAC covers the delivery's id and time as well as the body,
 * so neither can be changed on a captured delivery.
 */
public final class StandardWebhooks {

    public static final String ID_HEADER = "webhook-id";
    public static final String TIMESTAMP_HEADER = "webhook-timestamp";
    public static final String SIGNATURE_HEADER = "webhook-signature";
    /** Marks a secret serialised as the standard says: the key is the base64 after it. */
    public static final String SECRET_PREFIX = "whsec_";
    /** The symmetric (HMAC-SHA256) signature's version; others (v1a is ed25519) are ignored. */
    static final String VERSION = "v1";
    private static final String UNUSABLE = "it must be non-empty, and after " + SECRET_PREFIX + " non-empty base64";
    /** 256 bits: the standard asks for 24 to 64 bytes of key. */
    private static final int SECRET_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private StandardWebhooks() {}

    /** A new random secret, serialised as the standard says ({@code whsec_<base64>}), so its libraries take it as is. */
    public static String newSecret() {
        byte[] key = new byte[SECRET_BYTES];
        RANDOM.nextBytes(key);
        return SECRET_PREFIX + Base64.getEncoder().encodeToString(key);
    }

    /**
     * The three headers of a delivery, with one {@code v1} signature per secret: during a rotation Runner signs
     * with the new and the old key and the receiver accepts either.
     *
     * @param id the delivery's identity, the same on every retry of it; it must not contain '.', the separator
     *           of the signed content
     */
    public static Map<String, String> headers(List<String> secrets, String id, long timestampSeconds, byte[] body) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(ID_HEADER, id);
        headers.put(TIMESTAMP_HEADER, Long.toString(timestampSeconds));
        headers.put(SIGNATURE_HEADER, sign(secrets, id, timestampSeconds, body));
        return headers;
    }

    /** The {@code webhook-signature} value: {@code v1,<base64>} per secret, space-separated, in the secrets' order. */
    public static String sign(List<String> secrets, String id, long timestampSeconds, byte[] body) {
        if (secrets == null || secrets.isEmpty()) {
            throw new IllegalArgumentException("at least one signing secret is needed");
        }
        if (id == null || id.isBlank() || id.indexOf('.') >= 0) {
            throw new IllegalArgumentException("webhook id must be non-blank and free of '.': " + id);
        }
        if (timestampSeconds < 0) {
            throw new IllegalArgumentException("timestampSeconds < 0: " + timestampSeconds);
        }
        StringJoiner header = new StringJoiner(" ");
        for (int i = 0; i < secrets.size(); i++) {
            byte[] key = key(secrets.get(i));
            if (key == null) {
                // The message names the position, never the secret.
                throw new IllegalArgumentException("signing secret " + i + " is unusable: " + UNUSABLE);
            }
            header.add(VERSION + "," + Base64.getEncoder().encodeToString(mac(key, id, timestampSeconds, body)));
        }
        return header.toString();
    }

    /** Throws, naming the rule but not the secret, when {@code secret} cannot key this scheme; for checks on save. */
    public static void requireUsable(String secret) {
        if (key(secret) == null) {
            throw new IllegalArgumentException("webhook secret is unusable: " + UNUSABLE);
        }
    }

    /**
     * The HMAC key of a secret: after {@code whsec_} its base64 decoded, as the standard serialises secrets; any
     * other secret its UTF-8 bytes. Null when there is no key (null, empty, bad or empty base64).
     */
    static byte[] key(String secret) {
        if (secret == null || secret.isEmpty()) {
            return null;
        }
        if (!secret.startsWith(SECRET_PREFIX)) {
            return secret.getBytes(StandardCharsets.UTF_8);
        }
        try {
            byte[] key = Base64.getDecoder().decode(secret.substring(SECRET_PREFIX.length()));
            return key.length == 0 ? null : key;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** HMAC-SHA256 of {@code "{id}.{timestamp}.{body}"}, the content both signing and verifying compute. */
    static byte[] mac(byte[] key, String id, long timestampSeconds, byte[] body) {
        return Hmac.sha256(key, (id + "." + timestampSeconds + ".").getBytes(StandardCharsets.UTF_8), body);
    }
}
