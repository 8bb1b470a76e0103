package dev.runner.apikey;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TenantKeysTest {

    @Test
    void aKeyIsThePrefixAnd256RandomBits() {
        Set<String> keys = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String key = TenantKeys.generate();
            assertTrue(key.matches("rkt_[A-Za-z0-9_-]{43}"), key);
            assertTrue(TenantKeys.looksLikeKey(key), key);
            keys.add(key);
        }
        assertEquals(1000, keys.size());
    }

    @Test
    void tokensWithoutTheShapeAreNeverLookedUp() {
        assertFalse(TenantKeys.looksLikeKey(null));
        assertFalse(TenantKeys.looksLikeKey("rkt_short"));
        assertFalse(TenantKeys.looksLikeKey("rk_" + "a".repeat(44)));
    }

    @Test
    void theHashIsSha256OfTheKeysUtf8Bytes() {
        // FIPS 180-2 test vector: SHA-256("abc").
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", HexFormat.of().formatHex(TenantKeys.hash("abc")));
    }
}
