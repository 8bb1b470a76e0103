package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.item.ItemJob;
import dev.runner.json.Json;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A tenant's failures are its own in batches mixed with other tenants' items: one tenant's poison
 * item makes the partner fail every /process-batch call that carries it, as a whole. The calls are
 * attributed per tenant, so only the poison tenant's breaker scope counts them and opens; the
 * integration's breaker and the other tenants' scopes stay closed, and the other tenants' items
 * succeed in the same invocation, none deferred. Real Postgres, Redis and handler; one hand-made
 * SQS batch per invocation.
 */
class MixedBatchAttributionIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void aTenantsPoisonItemInMixedBatchesOpensOnlyItsOwnScope() {
        var integration = fixture.integration(true);
        String poison = integration.tenantId();
        String healthyA = poison + "-a";
        String healthyB = poison + "-b";
        for (String tenant : List.of(healthyA, healthyB)) {
            var response = fixture.api("PUT", "/tenants/" + tenant + "/integrations/" + integration.integrationKey(),
                    Json.object().put("enabled", true).put("webhookSecret", integration.webhookSecret()));
            assertEquals(200, response.status(), response.body());
        }
        // The partner fails a whole batch that carries the poison tenant's item.
        fixture.handlers.handler(integration.handlerKey()).batchReply(request -> {
            for (JsonNode item : request.path("items")) {
                if (item.path("tenantId").asText().equals(poison)) {
                    return FakeHandler.Reply.status(500);
                }
            }
            return FakeHandler.Reply.OK;
        });
        int batches = 8;
        List<ItemJob> poisoned = fixture.storedItems(integration, poison, batches);
        List<ItemJob> a = fixture.storedItems(integration, healthyA, 5 * batches);
        List<ItemJob> b = fixture.storedItems(integration, healthyB, 4 * batches);
        var function = new ItemWorkerFunction(fixture.runner);

        for (int i = 0; i < batches; i++) {
            List<ItemJob> batch = new ArrayList<>();
            batch.add(poisoned.get(i));
            batch.addAll(a.subList(5 * i, 5 * i + 5));
            batch.addAll(b.subList(4 * i, 4 * i + 4));
            Lambda.sqs(function, ItemWorkerCostIT.batch(batch), TestContext.of("items", 60_000));
        }

        JsonNode breaker = Json.parse(fixture.api("GET", "/breakers/" + integration.integrationKey(), null).body());
        assertEquals("closed", breaker.path("state").asText(), "the integration's breaker: " + breaker);
        List<String> openScopes = new ArrayList<>();
        breaker.path("tenants").forEach(scope -> {
            if (!scope.path("state").asText().equals("closed")) {
                openScopes.add(scope.path("tenantId").asText());
            }
        });
        assertEquals(List.of(poison), openScopes, "only the poison tenant's scope opened: " + breaker);
        for (ItemJob job : a) {
            assertEquals("succeeded", status(job), "tenant A's items succeed beside the poison, none deferred");
        }
        for (ItemJob job : b) {
            assertEquals("succeeded", status(job));
        }
        assertTrue(poisoned.stream().noneMatch(job -> status(job).equals("succeeded")));
    }

    private static String status(ItemJob job) {
        return fixture.runner.database().query("select status from execution_items where item_id = ?", row -> row.getString(1),
                job.itemId()).getFirst();
    }
}
