package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Webhooks Runner takes, through WebhookFunction with real Postgres behind: a delivery is identified by what its
 * scheme signs and deduplicated per tenant integration, so a capture sent again to another handler path of the same
 * tenant, or under another id header, is answered but not processed again; secrets rotate with two accepted at once.
 */
class WebhookDeliveryIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void aDeliveryReplayedToAnotherHandlerPathOfTheTenantIsNotProcessedAgain() {
        var integration = fixture.integration(false);
        var second = withSecondHandler(integration);
        String body = "[{\"externalId\":\"r-1\"},{\"externalId\":\"r-2\"}]";
        var original = fixture.webhookEvent(integration, body, "msg_replayed");

        JsonNode first = accepted(fixture.webhook(original));
        var replay = fixture.webhookEvent(second, body, "msg_replayed");
        replay.setHeaders(original.getHeaders());
        JsonNode again = accepted(fixture.webhook(replay));

        assertEquals(0, first.path("duplicates").asInt());
        assertEquals(2, again.path("accepted").asInt());
        assertEquals(2, again.path("duplicates").asInt());
        assertEquals(first.path("runId").asText(), again.path("runId").asText(), "answered with the run the delivery made");
        assertEquals(1, runs(integration.tenantId()), "one run, on the first handler");
        assertEquals(2, items(integration.tenantId()));
    }

    @Test
    void aRepeatedDeliveryIsAnsweredWithItsRunAndAddsNothing() {
        var integration = fixture.integration(false);
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"once\"}", "msg_" + UUID.randomUUID());
        JsonNode first = accepted(fixture.webhook(event));
        JsonNode again = accepted(fixture.webhook(event));
        assertEquals(first.path("runId").asText(), again.path("runId").asText());
        assertEquals(1, again.path("duplicates").asInt());
        assertEquals(1, runs(integration.tenantId()));
    }

    /**
     * Issue 31's repro: ten deliveries, each its own webhook-id, each an update of one record: every one is processed
     * (the rule was once per externalId per handler for 24 h, and the nine later updates were answered as duplicates).
     */
    @Test
    void tenNewDeliveriesUpdatingOneRecordAreEachProcessed() {
        var integration = fixture.integration(false);
        List<String> runIds = new ArrayList<>();
        for (int n = 0; n < 10; n++) {
            JsonNode answer = accepted(fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"contact-28\",\"n\":" + n + "}")));
            assertEquals(0, answer.path("duplicates").asInt(), "update " + n);
            runIds.add(answer.path("runId").asText());
        }

        assertEquals(10, Set.copyOf(runIds).size(), "a run per delivery");
        await().atMost(Duration.ofSeconds(30)).until(() -> processedNs(integration).size() == 10);
        assertEquals(Set.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), Set.copyOf(processedNs(integration)));
    }

    @Test
    void elementsOfOneDeliveryAreToldApartByExternalId() {
        var integration = fixture.integration(false);
        JsonNode answer = accepted(fixture.webhook(fixture.webhookEvent(integration,
                "[{\"externalId\":\"a\",\"v\":1},{\"externalId\":\"a\",\"v\":2},{\"externalId\":\"b\"}]")));
        assertEquals(3, answer.path("accepted").asInt());
        assertEquals(1, answer.path("duplicates").asInt(), "the second a is the first's duplicate");
        assertEquals(2, items(integration.tenantId()));
    }

    @Test
    void theSameDeliverySentConcurrentlyIsProcessedOnce() throws Exception {
        var integration = fixture.integration(false);
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"raced\"}", "msg_" + UUID.randomUUID());
        List<Callable<JsonNode>> senders = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            senders.add(() -> accepted(fixture.webhook(event)));
        }
        List<JsonNode> answers = new ArrayList<>();
        try (var pool = Executors.newFixedThreadPool(8)) {
            for (Future<JsonNode> answer : pool.invokeAll(senders)) {
                answers.add(answer.get());
            }
        }

        assertEquals(1, answers.stream().filter(a -> a.path("duplicates").asInt() == 0).count(), "one new, seven repeats: " + answers);
        assertEquals(1, answers.stream().map(a -> a.path("runId").asText()).distinct().count(), "every answer names the one run");
        assertEquals(1, runs(integration.tenantId()));
        assertEquals(1, items(integration.tenantId()));
    }

    @Test
    void aBodyOfMoreItemsThanTheLimitIsRefusedNamingIt() {
        var integration = fixture.integration(false);
        StringBuilder body = new StringBuilder("[");
        for (int i = 0; i <= 1000; i++) {
            body.append(i == 0 ? "" : ",").append("{\"externalId\":\"").append(i).append("\"}");
        }
        APIGatewayV2HTTPResponse response = fixture.webhook(fixture.webhookEvent(integration, body.append("]").toString()));

        assertEquals(413, response.getStatusCode(), response.getBody());
        JsonNode error = Json.parse(response.getBody());
        assertEquals("too_many_items", error.path("error").asText());
        assertTrue(error.path("message").asText().contains("1000") && error.path("message").asText().contains("RUNNER_MAX_ITEMS_PER_DELIVERY"),
                error.toString());
        assertEquals(0, runs(integration.tenantId()));
    }

    @Test
    void duringARotationBothSecretsVerifyThenOnlyTheNewOne() {
        var integration = fixture.integration(false);
        String next = "whsec_" + Base64.getEncoder().encodeToString(("next-" + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
        var rotated = new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(), integration.handlerKey(), next);
        ApiResponse rotating = fixture.api("PUT", tenantPath(integration), Json.object().put("enabled", true)
                .set("webhookSecrets", Json.array().add(next).add(integration.webhookSecret())));
        assertEquals(200, rotating.status(), rotating.body());
        assertEquals(2, Json.parse(rotating.body()).path("webhookSecretCount").asInt());
        assertFalse(rotating.body().contains(next) || rotating.body().contains(integration.webhookSecret()), "write-only");

        accepted(fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"old-key\"}")));
        accepted(fixture.webhook(fixture.webhookEvent(rotated, "{\"externalId\":\"new-key\"}")));

        assertEquals(200, fixture.api("PUT", tenantPath(integration), Json.object().put("enabled", true).put("webhookSecret", next)).status());
        assertEquals(401, fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"old-key-late\"}")).getStatusCode());
        accepted(fixture.webhook(fixture.webhookEvent(rotated, "{\"externalId\":\"new-key-2\"}")));
    }

    @Test
    void aWhsecSecretThatIsNotBase64IsRefusedOnSave() {
        var integration = fixture.integration(false);
        ApiResponse response = fixture.api("PUT", tenantPath(integration), Json.object().put("webhookSecret", "whsec_%%%%not-base64%%%%"));
        assertEquals(400, response.status(), response.body());
        assertFalse(response.body().contains("not-base64"), "the secret is not echoed: " + response.body());
    }

    @Test
    void githubDeliveriesAreTheirBodySoAnotherDeliveryHeaderIsStillARepeat() {
        var integration = withScheme(fixture.integration(false), "github");
        String body = "{\"externalId\":\"gh-1\",\"action\":\"opened\"}";
        String signature = "sha256=" + HexFormat.of().formatHex(hmac(integration.webhookSecret().getBytes(StandardCharsets.UTF_8), body));

        JsonNode first = accepted(fixture.webhook(providerEvent(integration, body, Map.of(
                "x-hub-signature-256", signature, "x-github-delivery", UUID.randomUUID().toString()))));
        JsonNode replay = accepted(fixture.webhook(providerEvent(integration, body, Map.of(
                "x-hub-signature-256", signature, "x-github-delivery", UUID.randomUUID().toString()))));

        assertEquals(first.path("runId").asText(), replay.path("runId").asText());
        assertEquals(1, replay.path("duplicates").asInt());
        assertEquals(401, fixture.webhook(fixture.webhookEvent(integration, body)).getStatusCode(),
                "a github type does not take Standard Webhooks signatures");
    }

    @Test
    void stripeDeliveriesAreTheirEventIdSoAResignedRetryIsARepeat() {
        var integration = withScheme(fixture.integration(false), "stripe");
        String body = "{\"id\":\"evt_" + UUID.randomUUID() + "\",\"externalId\":\"st-1\"}";
        JsonNode first = accepted(fixture.webhook(stripeEvent(integration, body, Instant.now().getEpochSecond())));
        JsonNode retry = accepted(fixture.webhook(stripeEvent(integration, body, Instant.now().getEpochSecond() - 60)));
        assertEquals(first.path("runId").asText(), retry.path("runId").asText());
        assertEquals(1, runs(integration.tenantId()));
    }

    @Test
    void shopifyDeliveriesVerifyWithTheirBase64Hmac() {
        var integration = withScheme(fixture.integration(false), "shopify");
        String body = "{\"externalId\":\"sh-1\"}";
        String signature = Base64.getEncoder().encodeToString(hmac(integration.webhookSecret().getBytes(StandardCharsets.UTF_8), body));
        accepted(fixture.webhook(providerEvent(integration, body, Map.of("x-shopify-hmac-sha256", signature))));
    }

    // ------------------------------------------------------------------ helpers

    /** The n of each payload the handler was called with. */
    private static List<Integer> processedNs(PipelineFixture.Integration integration) {
        return fixture.handlers.itemCalls(integration.handlerKey()).stream().flatMap(call -> FakeHandler.items(call).stream())
                .map(item -> item.path("payload").path("n").asInt()).toList();
    }

    /** The integration's type with a second handler, at the same fake handler service. */
    private static PipelineFixture.Integration withSecondHandler(PipelineFixture.Integration integration) {
        JsonNode type = Json.parse(fixture.api("GET", "/types/" + integration.integrationKey(), null).body());
        ObjectNode handlers = (ObjectNode) type.path("handlers");
        String secondKey = integration.handlerKey() + "-b";
        handlers.set(secondKey, handlers.path(integration.handlerKey()).deepCopy());
        ((ObjectNode) handlers.path(secondKey)).put("url", fixture.handlers.url(secondKey));
        assertEquals(200, fixture.api("PUT", "/types/" + integration.integrationKey(), type).status());
        return new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(), secondKey, integration.webhookSecret());
    }

    /** The integration's type with another webhook scheme, and a plain secret as those providers issue. */
    private static PipelineFixture.Integration withScheme(PipelineFixture.Integration integration, String scheme) {
        ObjectNode type = (ObjectNode) Json.parse(fixture.api("GET", "/types/" + integration.integrationKey(), null).body());
        type.put("webhookScheme", scheme);
        assertEquals(200, fixture.api("PUT", "/types/" + integration.integrationKey(), type).status());
        String secret = scheme + "-secret-" + UUID.randomUUID();
        assertEquals(200, fixture.api("PUT", tenantPath(integration), Json.object().put("webhookSecret", secret)).status());
        return new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(), integration.handlerKey(), secret);
    }

    private static APIGatewayV2HTTPEvent providerEvent(PipelineFixture.Integration integration, String body, Map<String, String> signature) {
        APIGatewayV2HTTPEvent event = fixture.webhookEvent(integration, body);
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        List.of(StandardWebhooks.ID_HEADER, StandardWebhooks.TIMESTAMP_HEADER, StandardWebhooks.SIGNATURE_HEADER).forEach(headers::remove);
        headers.putAll(signature);
        event.setHeaders(headers);
        return event;
    }

    private static APIGatewayV2HTTPEvent stripeEvent(PipelineFixture.Integration integration, String body, long timestamp) {
        String v1 = HexFormat.of().formatHex(hmac(integration.webhookSecret().getBytes(StandardCharsets.UTF_8), timestamp + "." + body));
        return providerEvent(integration, body, Map.of("stripe-signature", "t=" + timestamp + ",v1=" + v1));
    }

    private static byte[] hmac(byte[] key, String content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(content.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode accepted(APIGatewayV2HTTPResponse response) {
        assertEquals(202, response.getStatusCode(), response.getBody());
        JsonNode body = Json.parse(response.getBody());
        assertTrue(body.has("runId"), response.getBody());
        return body;
    }

    private static String tenantPath(PipelineFixture.Integration integration) {
        return "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey();
    }

    private static long runs(String tenantId) {
        return fixture.runner.database().queryOne("select count(*) from runs where tenant_id = ?", row -> row.getLong(1), tenantId).orElseThrow();
    }

    private static long items(String tenantId) {
        return fixture.runner.database().queryOne("select count(*) from execution_items where tenant_id = ?", row -> row.getLong(1), tenantId)
                .orElseThrow();
    }
}
