package dev.runner.integration;

import dev.runner.cost.CostMeter;
import dev.runner.redis.TestClock;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The webhook endpoint's tenant lookups under a flood: Postgres is asked once per tenant per TTL, misses too. */
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
}
