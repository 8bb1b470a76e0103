package dev.runner.redis;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Each script's keys must live on one cluster slot. No I/O. */
class KeysTest {

    private final Keys keys = new Keys("runner");

    @Test
    void integrationKeysShareOneSlot() {
        List<String> all = List.of(
                keys.breaker("crm-x"), keys.probes("crm-x"), keys.paused("crm-x", "sync"),
                keys.leases("crm-x", "sync"), keys.rate("crm-x", "sync"), keys.type("crm-x"),
                keys.leases("crm-x", "other"));
        int slot = SlotHash.getSlot(all.getFirst());
        for (String key : all) {
            assertEquals(slot, SlotHash.getSlot(key), key);
        }
    }

    @Test
    void integrationWithBracesInItsNameStillUsesOneSlot() {
        assertEquals(SlotHash.getSlot(keys.breaker("a}b")), SlotHash.getSlot(keys.leases("a}b", "h{x}")));
    }

    @Test
    void tenantWindowHasItsOwnTag() {
        assertEquals("runner:{t:acme}:window", keys.tenantWindow("acme"));
        assertEquals("runner:{i:crm-x}:breaker", keys.breaker("crm-x"));
    }

    @Test
    void everyMinuteOfDeferralCountsSharesOneSlot() {
        assertEquals("runner:{m}:deferrals:29000000", keys.deferrals(29_000_000));
        assertEquals(SlotHash.getSlot(keys.deferrals(1)), SlotHash.getSlot(keys.deferrals(29_000_000)));
    }

    @Test
    void prefixWithBracesIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new Keys("run{ner}"));
        assertThrows(IllegalArgumentException.class, () -> new Keys(" "));
    }
}
