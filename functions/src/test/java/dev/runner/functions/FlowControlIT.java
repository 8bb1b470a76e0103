package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.testing.LimitedPartner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Flow control end to end through the functions on real servers: a partner that answers 429 with
 * Retry-After beyond its limit (adaptive limits), a tenant integration's weight (an operator's to
 * set), and "why is it waiting" for a tenant.
 */
class FlowControlIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "100000"));

    /**
     * A handler configured for 8 calls at once whose partner serves 2 and answers 429
     * Retry-After: 1 beyond: every item succeeds with its one attempt (a 429 spends none), none is
     * dead, and the handler's scope shows what it learnt.
     */
    @Test
    void aPartnersRetryAfterStopsItsScopeAndSpendsNoAttempt() {
        var integration = fixture.integration(false, Json.object().put("concurrency", 8));
        LimitedPartner partner = LimitedPartner.atOnce(2, Duration.ofMillis(50), 1);
        fixture.handlers.handler(integration.handlerKey()).itemReply(partner::process);

        UUID runId = fixture.webhookRun(integration, IntStream.range(0, 40).mapToObj(i -> "{\"externalId\":\"p-" + i + "\"}")
                .collect(Collectors.joining(",", "[", "]")));
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
                .until(() -> fixture.runJson(runId).path("status").asText().equals("completed"));

        JsonNode counts = fixture.runJson(runId).path("counts");
        assertEquals(40, counts.path("succeeded").asInt());
        assertEquals(0, counts.path("dead").asInt());
        assertEquals(40L, (long) fixture.runner.database().query(
                "select count(*) from execution_items where run_id = ? and attempts = 1", row -> row.getLong(1), runId).getFirst(),
                "every item used exactly one attempt: the 429s spent none");
        long refused = partner.answers().stream().filter(a -> !a.served()).count();
        assertTrue(refused > 0, "the partner refused some calls: the test saw what it is about");
        JsonNode breaker = Json.parse(fixture.api("GET", "/breakers/" + integration.integrationKey(), null).body());
        JsonNode adaptive = breaker.path("adaptive").path(integration.handlerKey());
        assertTrue(adaptive.path("handler").isObject(), "the handler's scope learnt a limit: " + breaker);
        assertEquals("429", adaptive.path("handler").path("why").asText());
        assertTrue(adaptive.path("handler").path("concurrency").asInt() < 8, adaptive.toString());
    }

    @Test
    void aWeightIsAnOperatorsToSetAndShowsOnTheTenantIntegration() {
        var integration = fixture.integration(false);
        String path = "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey();
        ApiResponse created = fixture.api("POST", "/keys", Json.object().put("tenantId", integration.tenantId()).put("name", "weights"));
        String tenantKey = Json.parse(created.body()).path("key").asText();

        ApiResponse byTenant = PipelineFixture.call(fixture.runner, tenantKey, "PUT", path, Json.object().put("enabled", true).put("weight", 5));
        assertEquals(403, byTenant.status(), byTenant.body());
        ApiResponse byOperator = fixture.api("PUT", path, Json.object().put("enabled", true).put("weight", 3));
        assertEquals(200, byOperator.status(), byOperator.body());
        assertEquals(3, Json.parse(byOperator.body()).path("weight").asInt());
        ApiResponse tenantUpdate = PipelineFixture.call(fixture.runner, tenantKey, "PUT", path, Json.object().put("enabled", true));
        assertEquals(200, tenantUpdate.status(), tenantUpdate.body());
        assertEquals(3, Json.parse(tenantUpdate.body()).path("weight").asInt(), "a tenant's update without weight keeps it");
        assertEquals(400, fixture.api("PUT", path, Json.object().put("enabled", true).put("weight", 0)).status());
    }

    @Test
    void aTenantSeesWhyItsItemsWaitAndNoOtherTenants() {
        var integration = fixture.integration(false);
        var other = fixture.integration(false);
        assertEquals(200, fixture.api("POST", "/handlers/" + integration.integrationKey() + "/" + integration.handlerKey() + "/pause", null)
                .status());
        UUID runId = fixture.webhookRun(integration, "[{\"externalId\":\"w-1\"},{\"externalId\":\"w-2\"}]");
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.runJson(runId).path("counts").path("parked").asInt() == 2);
        ApiResponse created = fixture.api("POST", "/keys", Json.object().put("tenantId", integration.tenantId()).put("name", "why"));
        String tenantKey = Json.parse(created.body()).path("key").asText();

        ApiResponse answer = PipelineFixture.call(fixture.runner, tenantKey, "GET", "/tenants/" + integration.tenantId(), null);
        assertEquals(200, answer.status(), answer.body());
        JsonNode body = Json.parse(answer.body());
        JsonNode handler = body.path("handlers").get(0);
        assertEquals(integration.handlerKey(), handler.path("handlerKey").asText(), body.toString());
        assertEquals(2, handler.path("items").path("parked").asInt());
        JsonNode reason = handler.path("waitingFor").get(0);
        assertEquals("paused", reason.path("reason").asText(), body.toString());
        assertTrue(reason.path("now").asBoolean());
        assertEquals(2, reason.path("items").asInt());
        assertEquals(404, PipelineFixture.call(fixture.runner, tenantKey, "GET", "/tenants/" + other.tenantId(), null).status(),
                "another tenant's is as absent as one that does not exist");
    }
}
