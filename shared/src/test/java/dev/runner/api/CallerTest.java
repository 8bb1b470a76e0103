package dev.runner.api;

import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CallerTest {

    private final Caller admin = new Caller.Admin("api-key");
    private final Caller tenant = new Caller.Tenant("t-1", UUID.randomUUID());

    @Test
    void aTenantKeySeesItsOwnTenantOnly() {
        assertTrue(tenant.sees("t-1"));
        assertFalse(tenant.sees("t-2"));
        assertTrue(tenant.sees(null), "a list not narrowed to a tenant is narrowed to its own");
        assertTrue(admin.sees("t-2"));
        assertFalse(new Caller.Anonymous().sees(null));
    }

    @Test
    void aTenantKeysListsAreNarrowedToItsTenantWhateverItAsks() {
        assertEquals("t-1", tenant.tenantFilter(null));
        assertEquals("t-1", tenant.tenantFilter("t-2"));
        assertNull(admin.tenantFilter(null));
        assertEquals("t-2", admin.tenantFilter("t-2"));
    }
}
