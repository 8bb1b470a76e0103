package dev.runner.security;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;

/** HMAC-SHA256, the one primitive every webhook scheme here signs with. */
final class Hmac {

    private static final String ALGORITHM = "HmacSHA256";

    private Hmac() {}

    /** The MAC of the parts concatenated; {@code key} must not be empty (the JCA refuses empty keys). */
    static byte[] sha256(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " unavailable", e);
        }
    }
}
