package dev.runner.apikey;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * How tenant keys look and are hashed. A key is {@value #PREFIX} followed by 256 random bits
 * (base64url); Postgres keeps only its SHA-256, looked up by that hash.
 *
 * <p>A fast hash is right here, as for GitHub's or Stripe's API tokens: bcrypt, scrypt and argon2
 * are slow to make guessing a low-entropy password expensive, but nobody can enumerate 2^256 keys
 * at any hash speed. A slow salted hash would also cost tens of milliseconds of CPU on every
 * request and rule out finding the key by its hash (each stored key would have to be tried).
 */
public final class TenantKeys {

    /** Marks a tenant key, so a bearer token that lacks it is never looked up. */
    public static final String PREFIX = "rkt_";
    private static final int RANDOM_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private TenantKeys() {}

    /** A new key; shown once to whoever created it, never stored. */
    public static String generate() {
        byte[] bytes = new byte[RANDOM_BYTES];
        RANDOM.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** Whether a bearer token has a tenant key's shape (prefix and length); says nothing of its validity. */
    public static boolean looksLikeKey(String token) {
        return token != null && token.startsWith(PREFIX) && token.length() == PREFIX.length() + 43;
    }

    /** SHA-256 of the key's UTF-8 bytes: what Postgres stores and looks up. */
    public static byte[] hash(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
