package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.security.Signature;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad webhooks get their own 4xx with a JSON {error, message}, never a 5xx; real Postgres behind. */
class WebhookRejectionIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_WEBHOOK_MAX_BYTES", "2048"));
    private static PipelineFixture.Integration integration;

    @BeforeAll
    static void start() {
        integration = fixture.integration(false);
    }

    @Test
    void aWrongSignatureIs401() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"a\"}");
        headers(event).put("x-runner-signature", Signature.sign("some-other-secret-123", Instant.now().getEpochSecond(),
                event.getBody().getBytes(StandardCharsets.UTF_8)));
        assertRejected(event, 401, "bad_signature");
    }

    @Test
    void aMissingSignatureIs401() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"a\"}");
        headers(event).remove("x-runner-signature");
        assertRejected(event, 401, "bad_signature");
    }

    @Test
    void aStaleSignatureIs401() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"a\"}");
        long old = Instant.now().getEpochSecond() - 301;
        headers(event).put("x-runner-timestamp", Long.toString(old));
        headers(event).put("x-runner-signature", Signature.sign(integration.webhookSecret(), old, event.getBody().getBytes(StandardCharsets.UTF_8)));
        assertRejected(event, 401, "bad_signature");
    }

    @Test
    void aBodyChangedAfterSigningIs401() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"a\"}");
        event.setBody("{\"externalId\":\"b\"}");
        assertRejected(event, 401, "bad_signature");
    }

    @Test
    void malformedJsonIs400() {
        assertRejected(fixture.webhookEvent(integration, "{\"externalId\":"), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "\"just a string\""), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "[]"), 400, "malformed_body");
        assertRejected(fixture.webhookEvent(integration, "[1, 2]"), 400, "malformed_body");
    }

    @Test
    void anUnknownTenantIs404() {
        var unknown = new PipelineFixture.Integration("nobody", integration.integrationKey(), integration.handlerKey(), integration.webhookSecret());
        assertRejected(fixture.webhookEvent(unknown, "{\"externalId\":\"a\"}"), 404, "unknown_integration");
    }

    @Test
    void anUnknownHandlerIs404() {
        var unknown = new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(), "no-such-handler", integration.webhookSecret());
        assertRejected(fixture.webhookEvent(unknown, "{\"externalId\":\"a\"}"), 404, "unknown_handler");
    }

    @Test
    void aBodyOverTheLimitIs413() {
        String big = "{\"externalId\":\"big\",\"blob\":\"" + "x".repeat(3000) + "\"}";
        assertRejected(fixture.webhookEvent(integration, big), 413, "body_too_large");
    }

    @Test
    void aRepeatedDeliveryIsAcceptedButNotProcessedTwice() {
        var first = fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"evt-42\"}"));
        var second = fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"evt-42\"}"));
        assertEquals(202, first.getStatusCode());
        assertEquals(202, second.getStatusCode());
        assertEquals(0, Json.parse(first.getBody()).path("duplicates").asInt());
        assertEquals(1, Json.parse(second.getBody()).path("duplicates").asInt());
    }

    @Test
    void aBase64BodyIsVerifiedOnItsDecodedBytes() {
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"b64\"}");
        event.setBody(java.util.Base64.getEncoder().encodeToString(event.getBody().getBytes(StandardCharsets.UTF_8)));
        event.setIsBase64Encoded(true);
        assertEquals(202, fixture.webhook(event).getStatusCode());
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
