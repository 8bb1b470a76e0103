package dev.runner.security;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;

/** HMAC-SHA256, the one primitive every webhook scheme here signs with. */
public final class Hmac {

    private static final String ALGORITHM = "HmacSHA256";

    /**
     * An uninitialised MAC to clone: {@code Mac.getInstance} searches the providers on every call
     * (a noticeable share of signing a handler call), a clone does not. It holds no key.
     */
    private static final Mac PROTOTYPE = newMac();

    private Hmac() {}

    /** The MAC of the parts concatenated; {@code key} must not be empty (the JCA refuses empty keys). */
    public static byte[] sha256(byte[] key, byte[]... parts) {
        try {
            Mac mac = fresh();
            mac.init(new SecretKeySpec(key, ALGORITHM));
            for (byte[] part : parts) {
                mac.update(part);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " unavailable", e);
        }
    }

    private static Mac fresh() throws GeneralSecurityException {
        try {
            return (Mac) PROTOTYPE.clone();
        } catch (CloneNotSupportedException e) {
            return Mac.getInstance(ALGORITHM); // a provider whose MAC cannot be cloned
        }
    }

    private static Mac newMac() {
        try {
            return Mac.getInstance(ALGORITHM);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " unavailable", e);
        }
    }
}
