package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an operator sees of a tenant over its window (limit 5 per minute here): its window use and
 * deferred items, the delayed messages and waiting items on the tier, the deferrals on the chart.
 */
class OperatorViewsIT {

    private static final int TENANT_LIMIT = 5;

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", Integer.toString(TENANT_LIMIT)));

    @Test
    void aTenantOverItsWindowShowsItsDeferredItemsOnTheTenantTheTierAndTheChart() {
        var integration = fixture.integration(true);
        StringBuilder items = new StringBuilder("[");
        for (int i = 0; i < 8; i++) {
            items.append(i == 0 ? "" : ",").append("{\"externalId\":\"w-").append(i).append("\"}");
        }
        var response = fixture.webhook(fixture.webhookEvent(integration, items.append("]").toString()));
        assertEquals(202, response.getStatusCode(), response.getBody());

        JsonNode tenant = tenant(integration.tenantId());
        assertEquals(TENANT_LIMIT, tenant.path("window").path("usedLastMinute").asInt(), tenant.toString());
        assertEquals(TENANT_LIMIT, tenant.path("window").path("limitPerMinute").asInt());
        assertEquals(3, tenant.path("deferred").asInt(), "three items wait for slots in the next window: " + tenant);
        assertEquals(integration.integrationKey(), tenant.path("integrations").get(0).asText());

        JsonNode webhookTier = get("/queues").path("queues").get(0);
        assertEquals("items-webhook", webhookTier.path("name").asText());
        // Packed by their slots' second: one message or a few carry the three.
        assertTrue(webhookTier.path("delayed").asInt() >= 1, "sent with a delay until their slots: " + webhookTier);
        assertTrue(webhookTier.path("waitingItems").asInt() >= 3, webhookTier.toString());
        long age = webhookTier.path("oldestAgeSeconds").asLong(-1);
        assertTrue(age >= 0 && age < 60, webhookTier.toString());

        // Counted on the guard's next round trip (the worker's admission of the five admitted items).
        await().atMost(Duration.ofSeconds(20)).until(() -> deferred("tenant_limit") >= 3);
    }

    private static long deferred(String reason) {
        long total = 0;
        for (JsonNode minute : get("/metrics/items?minutes=2").path("minutes")) {
            total += minute.path("deferredBy").path(reason).asLong();
        }
        return total;
    }

    private static JsonNode tenant(String tenantId) {
        String next = null;
        do {
            JsonNode page = get("/tenants?limit=50" + (next == null ? "" : "&after=" + next));
            for (JsonNode tenant : page.path("tenants")) {
                if (tenant.path("tenantId").asText().equals(tenantId)) {
                    return tenant;
                }
            }
            next = page.path("next").isNull() ? null : page.path("next").asText();
        } while (next != null);
        throw new AssertionError("no tenant " + tenantId);
    }

    private static JsonNode get(String pathAndQuery) {
        var response = PipelineFixture.call(fixture.runner, fixture.apiKey, "GET", pathAndQuery, null);
        assertEquals(200, response.status(), response.body());
        return Json.parse(response.body());
    }
}
