package dev.runner.security;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;

/**
 * The signature of Runner's handler calls (docs/handler-contract.md, Signature), which handlers verify:
 * {@code v1=<hex HMAC-SHA256(secret, timestamp + "." + body)>}. The timestamp is inside the MAC, so a
 * captured request cannot be replayed after the tolerance. Tenants sign webhooks otherwise ({@link WebhookScheme}).
 */
public final class Signature {

    public static final String TIMESTAMP_HEADER = "X-Runner-Timestamp";
    public static final String SIGNATURE_HEADER = "X-Runner-Signature";
    private static final String VERSION = "v1=";

    /** Why a signature was refused; each is a 401, the message is safe to return. */
    public enum Failure {
        MISSING("signature or timestamp header is missing"),
        MALFORMED("signature must be v1=<hex> and the timestamp unix seconds"),
        STALE("timestamp is outside the accepted window"),
        MISMATCH("signature does not match");

        private final String message;

        Failure(String message) {
            this.message = message;
        }

        public String message() {
            return message;
        }
    }

    private Signature() {}

    public static String sign(String secret, long timestampSeconds, byte[] body) {
        return VERSION + HexFormat.of().formatHex(mac(secret, timestampSeconds, body));
    }

    /** Null when the signature is good; else why not. Compares in constant time. */
    public static Failure verify(String secret, String timestampHeader, String signatureHeader, byte[] body,
                                 Instant now, Duration tolerance) {
        if (timestampHeader == null || signatureHeader == null || timestampHeader.isBlank() || signatureHeader.isBlank()) {
            return Failure.MISSING;
        }
        long timestamp;
        byte[] presented;
        try {
            timestamp = Long.parseLong(timestampHeader.trim());
            String value = signatureHeader.trim();
            if (!value.startsWith(VERSION)) {
                return Failure.MALFORMED;
            }
            presented = HexFormat.of().parseHex(value.substring(VERSION.length()));
        } catch (IllegalArgumentException e) {
            return Failure.MALFORMED;
        }
        if (Math.abs(now.getEpochSecond() - timestamp) > tolerance.toSeconds()) {
            return Failure.STALE;
        }
        return MessageDigest.isEqual(mac(secret, timestamp, body), presented) ? null : Failure.MISMATCH;
    }

    private static byte[] mac(String secret, long timestampSeconds, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((timestampSeconds + ".").getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Constant-time equality of two secrets (API keys), whatever their lengths. */
    public static boolean secretsEqual(String expected, String presented) {
        if (expected == null || presented == null) {
            return false;
        }
        byte[] a = sha256(expected);
        byte[] b = sha256(presented);
        return MessageDigest.isEqual(a, b);
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }
}
