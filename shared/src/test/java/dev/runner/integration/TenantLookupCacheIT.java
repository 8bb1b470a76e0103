package dev.runner.integration;

import dev.runner.cost.CostMeter;
import dev.runner.json.Json;
import dev.runner.redis.TestClock;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The webhook endpoint's tenant lookups under a flood: Postgres is asked once per tenant per TTL,
 * misses too, and unknown tenants, however many, never evict a known one.
 */
class TenantLookupCacheIT {

    @Test
    void anUnknownTenantIsReadFromPostgresOncePerTtl() {
        CostMeter meter = new CostMeter();
        TestClock clock = TestClock.now();
        try (var stack = TestStack.create(Map.of()); var db = Database.connect(stack.config().database(), 2, meter)) {
            var integrations = new Integrations(new IntegrationStore(db, new ScheduleStore(db)), null, Duration.ofSeconds(5), clock);
            String nobody = "t-nobody-" + stack.name();

            for (int i = 0; i < 100; i++) {
                assertTrue(integrations.tenantIntegrationCached(nobody, "crm-x").isEmpty());
            }
            assertEquals(1, meter.snapshot().sqlStatements(), "a hundred lookups of a tenant that does not exist, one statement");

            clock.advance(Duration.ofSeconds(6));
            assertTrue(integrations.tenantIntegrationCached(nobody, "crm-x").isEmpty());
            assertEquals(2, meter.snapshot().sqlStatements(), "read again once its TTL has passed");
        }
    }

    /** Absent answers are cached apart from found ones (at most a thousand of them): a flood of made-up tenants evicts only its own. */
    @Test
    void aFloodOfUnknownTenantsDoesNotEvictAKnownOne() {
        CostMeter meter = new CostMeter();
        TestClock clock = TestClock.now();
        try (var stack = TestStack.create(Map.of()); var db = Database.connect(stack.config().database(), 2, meter)) {
            var store = new IntegrationStore(db, new ScheduleStore(db));
            store.putType(IntegrationType.fromJson("crm-x", Json.parse("{\"handlers\":{\"leads\":{\"url\":\"https://handlers.example/leads\"}}}")));
            List<String> known = List.of("t-acme", "t-globex", "t-initech");
            for (String tenant : known) {
                store.putTenantIntegration(new TenantIntegration(tenant, "crm-x", true, null, Json.object(), Map.of()), Map.of(),
                        IntegrationStore.Writer.OPERATOR, true);
            }
            var integrations = new Integrations(store, null, Duration.ofSeconds(60), clock);
            known.forEach(tenant -> assertTrue(integrations.tenantIntegrationCached(tenant, "crm-x").isPresent()));

            int flood = 10 * 1_000;
            for (int i = 0; i < flood; i++) {
                assertTrue(integrations.tenantIntegrationCached("t-made-up-" + i, "crm-x").isEmpty());
            }
            long before = meter.snapshot().sqlStatements();
            known.forEach(tenant -> assertTrue(integrations.tenantIntegrationCached(tenant, "crm-x").isPresent()));
            assertEquals(before, meter.snapshot().sqlStatements(), "after " + flood + " unknown tenants the known ones are still cached");
        }
    }
}
