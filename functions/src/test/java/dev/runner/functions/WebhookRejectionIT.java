package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Webhooks Runner does not take, through WebhookFunction with real Postgres behind: whatever is wrong with who a
 * delivery is for or how it is signed gets one and the same 401, so a prober learns nothing; after that, each
 * problem its own 4xx with a JSON {error, message}; never a 5xx.
 */
class WebhookRejectionIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_WEBHOOK_MAX_BYTES", "2048"));
    private static PipelineFixture.Integration integration;
    private static APIGatewayV2HTTPResponse badSignature;

    @BeforeAll
    static void start() {
        integration = fixture.integration(false);
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"a\"}");
        headers(event).putAll(StandardWebhooks.headers(List.of("whsec_c29tZS1vdGhlci1zZWNyZXQtMTIz"), "msg_1",
                Instant.now().getEpochSecond(), event.getBody().getBytes(StandardCharsets.UTF_8)));
        badSignature = fixture.webhook(event);
    }

    @Test
    void aWrongSignatureIsRefused() {
        assertEquals(401, badSignature.getStatusCode(), badSignature.getBody());
        JsonNode body = Json.parse(badSignature.getBody());
        assertEquals("unauthorized", body.path("error").asText());
        assertFalse(body.path("message").asText().isBlank());
        assertTrue(badSignature.getHeaders().get("content-type").startsWith("application/json"));
    }

    @Test
    void everythingWrongWithWhoOrHowIsAnsweredAlike() {
        String other = "tenant-nobody-" + fixture.stack.name();
        var disabled = fixture.integration(false);
        expectOk(fixture.api("PUT", tenantPath(disabled), Json.object().put("enabled", false)));
        var secretless = new PipelineFixture.Integration("tenant-nosecret-" + fixture.stack.name(), integration.integrationKey(),
                integration.handlerKey(), integration.webhookSecret());
        expectOk(fixture.api("PUT", tenantPath(secretless), Json.object().put("enabled", true)));

        Map<String, APIGatewayV2HTTPEvent> cases = new LinkedHashMap<>();
        cases.put("unknown tenant", event(new PipelineFixture.Integration(other, integration.integrationKey(), integration.handlerKey(),
                integration.webhookSecret())));
        cases.put("unknown integration", event(new PipelineFixture.Integration(integration.tenantId(), "crm-nothing",
                integration.handlerKey(), integration.webhookSecret())));
        cases.put("malformed tenant", event(new PipelineFixture.Integration("not a key!", integration.integrationKey(),
                integration.handlerKey(), integration.webhookSecret())));
        cases.put("disabled integration", event(disabled));
        cases.put("no webhook secret", event(secretless));
        cases.put("missing signature", without(event(integration), "webhook-signature"));
        cases.put("missing webhook-id", without(event(integration), "webhook-id"));
        cases.put("no signature header at all", without(without(without(event(integration), "webhook-signature"), "webhook-id"),
                "webhook-timestamp"));
        cases.put("stale signature", signedAt(integration, Instant.now().getEpochSecond() - 301));
        // Well past the 300 s tolerance: the check runs later, in whole seconds, so + 301 could land on 300.
        cases.put("signature from the future", signedAt(integration, Instant.now().getEpochSecond() + 330));
        cases.put("body changed after signing", withBody(event(integration), "{\"externalId\":\"b\"}"));
        cases.put("webhook-id changed after signing", with(event(integration), "webhook-id", "msg_other"));
        cases.put("signature of another scheme", with(without(event(integration), "webhook-signature"), "x-hub-signature-256",
                "sha256=" + "00".repeat(32)));
        cases.put("a v1= signature", with(event(integration), "webhook-signature", "v1=" + "00".repeat(32)));

        cases.forEach((what, event) -> {
            APIGatewayV2HTTPResponse response = fixture.webhook(event);
            assertEquals(badSignature.getStatusCode(), response.getStatusCode(), what);
            assertEquals(badSignature.getBody(), response.getBody(), what);
        });
        assertEquals(0L, (long) fixture.runner.database().queryOne("""
                select count(*) from execution_items
                where tenant_id in (?, ?, ?) or tenant_id = ? and external_id in ('a', 'b')
                """, row -> row.getLong(1), other, disabled.tenantId(), secretless.tenantId(), integration.tenantId()).orElseThrow(),
                "no item accepted from a refused delivery");
    }

    @Test
    void anUnknownHandlerOfAVerifiedTenantIs404() {
        var unknown = new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(), "no-such-handler",
                integration.webhookSecret());
        assertRejected(fixture.webhookEvent(unknown, "{\"externalId\":\"a\"}"), 404, "unknown_handler");
    }

    @Test
    void malformedJsonIs400() {
        assertRejected(fixture.webhookEvent(integration, "{\"externalId\":"), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "\"just a string\""), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "[]"), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "[1, 2]"), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "{\"externalId\":\"" + "x".repeat(513) + "\"}"), 400, "malformed_body");
    }

    @Test
    void aBodyOverTheLimitIs413() {
        String big = "{\"externalId\":\"big\",\"blob\":\"" + "x".repeat(3000) + "\"}";
        assertRejected(fixture.webhookEvent(integration, big), 413, "body_too_large");
    }

    @Test
    void aWebhookIdOver512CharactersIs400() {
        assertRejected(fixture.webhookEvent(integration, "{\"externalId\":\"a\"}", "m".repeat(513)), 400, "bad_request");
    }

    @Test
    void aNewDeliveryOfAnItemSeenBeforeIsAnUpdateAndMakesARunOfItsOwn() {
        var first = fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"evt-42\"}"));
        var second = fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"evt-42\"}"));
        assertEquals(202, first.getStatusCode());
        assertEquals(202, second.getStatusCode());
        assertEquals(0, Json.parse(first.getBody()).path("duplicates").asInt());
        assertEquals(0, Json.parse(second.getBody()).path("duplicates").asInt(), "a new webhook-id is new work: " + second.getBody());
        assertNotEquals(Json.parse(first.getBody()).path("runId"), Json.parse(second.getBody()).path("runId"));
    }

    @Test
    void aBase64BodyIsVerifiedOnItsDecodedBytes() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"b64\"}");
        event.setBody(java.util.Base64.getEncoder().encodeToString(event.getBody().getBytes(StandardCharsets.UTF_8)));
        event.setIsBase64Encoded(true);
        assertEquals(202, fixture.webhook(event).getStatusCode());
    }

    @Test
    void aBodyThatIsNotTheBase64ItClaimsIs400() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"not-b64\"}");
        event.setIsBase64Encoded(true);
        assertRejected(event, 400, "bad_request");
    }

    // ------------------------------------------------------------------ helpers

    private static APIGatewayV2HTTPEvent event(PipelineFixture.Integration target) {
        return fixture.webhookEvent(target, "{\"externalId\":\"a\"}");
    }

    private static APIGatewayV2HTTPEvent signedAt(PipelineFixture.Integration target, long timestamp) {
        var event = event(target);
        headers(event).putAll(StandardWebhooks.headers(List.of(target.webhookSecret()), "msg_at_" + timestamp, timestamp,
                event.getBody().getBytes(StandardCharsets.UTF_8)));
        return event;
    }

    private static APIGatewayV2HTTPEvent with(APIGatewayV2HTTPEvent event, String header, String value) {
        headers(event).put(header, value);
        return event;
    }

    private static APIGatewayV2HTTPEvent without(APIGatewayV2HTTPEvent event, String header) {
        headers(event).remove(header);
        return event;
    }

    private static APIGatewayV2HTTPEvent withBody(APIGatewayV2HTTPEvent event, String body) {
        event.setBody(body);
        return event;
    }

    private static String tenantPath(PipelineFixture.Integration target) {
        return "/tenants/" + target.tenantId() + "/integrations/" + target.integrationKey();
    }

    private static void expectOk(dev.runner.http.ApiResponse response) {
        assertEquals(200, response.status(), response.body());
    }

    private static Map<String, String> headers(APIGatewayV2HTTPEvent event) {
        var headers = new HashMap<>(event.getHeaders());
        event.setHeaders(headers);
        return headers;
    }

    private static void assertRejected(APIGatewayV2HTTPEvent event, int status, String error) {
        APIGatewayV2HTTPResponse response = fixture.webhook(event);
        assertEquals(status, response.getStatusCode(), response.getBody());
        JsonNode body = Json.parse(response.getBody());
        assertEquals(error, body.path("error").asText());
        assertFalse(body.path("message").asText().isBlank());
        assertTrue(response.getHeaders().get("content-type").startsWith("application/json"));
    }
}
