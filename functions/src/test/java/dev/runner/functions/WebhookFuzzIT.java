package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whatever reaches the webhook route (any path parameters, headers, body, size, encoding), WebhookFunction answers
 * below 500 with a JSON body and never throws, and takes no item that was not signed with the tenant's secret.
 * Real Postgres, Redis and SQS behind, as in AWS.
 */
class WebhookFuzzIT {

    private static final AtomicLong TRIED = new AtomicLong();
    private static final List<String> HEADER_NAMES = List.of("webhook-id", "webhook-timestamp", "webhook-signature", "x-event-id",
            "x-hub-signature-256", "x-github-delivery", "stripe-signature", "x-shopify-hmac-sha256", "content-type", "authorization");

    private static PipelineFixture fixture;
    /** Unsigned requests aim at it; it must never get an item. */
    private static PipelineFixture.Integration unsigned;
    /** Signed requests aim at it. */
    private static PipelineFixture.Integration signed;

    @BeforeContainer
    static void start() {
        fixture = new PipelineFixture(Map.of("RUNNER_WEBHOOK_MAX_BYTES", "4096"));
        unsigned = fixture.integration(false);
        signed = fixture.integration(true);
    }

    @AfterContainer
    static void stop() {
        System.out.println("WebhookFuzzIT: " + TRIED.get() + " webhook requests tried");
        fixture.close();
    }

    record Path(String tenantId, String integrationKey, String handlerKey) {}

    @Property(tries = 400)
    void anyUnsignedRequestIsAnsweredBelow500AndTakesNothing(@ForAll("paths") Path path, @ForAll("headers") Map<String, String> headers,
                                                             @ForAll("eventBodies") FuzzInputs.EventBody body,
                                                             @ForAll boolean wellFormedSignatureHeaders) {
        TRIED.incrementAndGet();
        Map<String, String> sent = new HashMap<>(headers);
        if (wellFormedSignatureHeaders) {
            // Past every format check: only the MAC can refuse it.
            sent.put("webhook-id", "msg_" + TRIED.get());
            sent.put("webhook-timestamp", Long.toString(Instant.now().getEpochSecond()));
            sent.put("webhook-signature", "v1," + Base64.getEncoder().encodeToString(Long.toString(TRIED.get()).repeat(8).getBytes(StandardCharsets.UTF_8)));
        }
        APIGatewayV2HTTPResponse response = fixture.webhook(event(path, sent, body));
        Statistics.collect(response.getStatusCode());
        assertAnswered(response);
        assertEquals(0L, items(unsigned.tenantId()), () -> "an unsigned request was taken: " + response.getBody());
    }

    @Property(tries = 120)
    void anySignedRequestIsAnsweredBelow500(@ForAll("bodies") byte[] body, @ForAll("webhookIds") String webhookId,
                                           @ForAll("handlerKeys") String handlerKey, @ForAll("offsets") long offset,
                                           @ForAll boolean base64) {
        TRIED.incrementAndGet();
        byte[] bytes = base64 ? body : new String(body, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        long timestamp = Instant.now().getEpochSecond() + offset;
        Map<String, String> headers = Map.of("webhook-id", webhookId, "webhook-timestamp", Long.toString(timestamp),
                "webhook-signature", "v1," + Base64.getEncoder().encodeToString(
                        hmac(signed.webhookSecret(), webhookId + "." + timestamp + ".", bytes)));
        var event = event(new Path(signed.tenantId(), signed.integrationKey(), handlerKey), headers,
                base64 ? new FuzzInputs.EventBody(Base64.getEncoder().encodeToString(bytes), true)
                        : new FuzzInputs.EventBody(new String(bytes, StandardCharsets.UTF_8), false));
        APIGatewayV2HTTPResponse response = fixture.webhook(event);
        Statistics.collect(response.getStatusCode(), errorOf(response));
        assertAnswered(response);
        if (response.getStatusCode() == 202) {
            assertTrue(Json.parse(response.getBody()).has("runId"), response.getBody());
        }
    }

    // ------------------------------------------------------------------ inputs

    @Provide
    Arbitrary<Path> paths() {
        Arbitrary<String> tenant = Arbitraries.frequencyOf(FuzzInputs.weighted(5, Arbitraries.just(unsigned.tenantId())),
                FuzzInputs.weighted(3, FuzzInputs.text()), FuzzInputs.weighted(1, Arbitraries.just(null)));
        Arbitrary<String> integration = Arbitraries.frequencyOf(FuzzInputs.weighted(5, Arbitraries.just(unsigned.integrationKey())),
                FuzzInputs.weighted(3, FuzzInputs.text()), FuzzInputs.weighted(1, Arbitraries.just(null)));
        Arbitrary<String> handler = Arbitraries.frequencyOf(FuzzInputs.weighted(5, Arbitraries.just(unsigned.handlerKey())),
                FuzzInputs.weighted(3, FuzzInputs.text()), FuzzInputs.weighted(1, Arbitraries.just(null)));
        return Combinators.combine(tenant, integration, handler).as(Path::new);
    }

    @Provide
    Arbitrary<Map<String, String>> headers() {
        return FuzzInputs.headers(HEADER_NAMES);
    }

    @Provide
    Arbitrary<FuzzInputs.EventBody> eventBodies() {
        return FuzzInputs.eventBody();
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        return Arbitraries.frequencyOf(FuzzInputs.weighted(4, FuzzInputs.body()),
                FuzzInputs.weighted(5, FuzzInputs.items().map(node -> Json.write(node).getBytes(StandardCharsets.UTF_8))),
                FuzzInputs.weighted(1, Arbitraries.bytes().array(byte[].class).ofMinSize(4000).ofMaxSize(5000)));
    }

    @Provide
    Arbitrary<String> webhookIds() {
        return Arbitraries.frequencyOf(FuzzInputs.weighted(6, Arbitraries.strings().alpha().numeric().ofMinLength(1).ofMaxLength(30)
                        .map(s -> "msg_" + s + "_" + TRIED.get())),
                FuzzInputs.weighted(2, FuzzInputs.text().filter(s -> !s.isBlank())),
                FuzzInputs.weighted(1, Arbitraries.strings().alpha().ofMinLength(500).ofMaxLength(520)));
    }

    @Provide
    Arbitrary<String> handlerKeys() {
        return Arbitraries.frequencyOf(FuzzInputs.weighted(8, Arbitraries.just(signed.handlerKey())),
                FuzzInputs.weighted(2, FuzzInputs.text()));
    }

    @Provide
    Arbitrary<Long> offsets() {
        return Arbitraries.frequencyOf(FuzzInputs.weighted(8, Arbitraries.longs().between(-290, 290)),
                FuzzInputs.weighted(2, Arbitraries.longs().between(-100_000, 100_000)));
    }

    // ------------------------------------------------------------------ helpers

    private static APIGatewayV2HTTPEvent event(Path path, Map<String, String> headers, FuzzInputs.EventBody body) {
        APIGatewayV2HTTPEvent event = Events.load("webhook.json", APIGatewayV2HTTPEvent.class);
        Map<String, String> parameters = new HashMap<>();
        parameters.put("tenantId", path.tenantId());
        parameters.put("integrationKey", path.integrationKey());
        parameters.put("handlerKey", path.handlerKey());
        event.setPathParameters(parameters);
        event.setRawPath("/webhooks/" + path.tenantId() + "/" + path.integrationKey() + "/" + path.handlerKey());
        event.setHeaders(new HashMap<>(headers));
        event.setBody(body.body());
        event.setIsBase64Encoded(body.base64());
        return event;
    }

    private static void assertAnswered(APIGatewayV2HTTPResponse response) {
        assertTrue(response.getStatusCode() >= 200 && response.getStatusCode() < 500,
                () -> response.getStatusCode() + " " + response.getBody());
        JsonNode body = Json.parse(response.getBody());
        if (response.getStatusCode() >= 400) {
            assertTrue(body.path("error").isTextual() && body.path("message").isTextual(), response.getBody());
        }
    }

    private static String errorOf(APIGatewayV2HTTPResponse response) {
        return Json.parse(response.getBody()).path("error").asText("-");
    }

    private static long items(String tenantId) {
        return fixture.runner.database().queryOne("select count(*) from execution_items where tenant_id = ?", row -> row.getLong(1), tenantId)
                .orElseThrow();
    }

    /** HMAC-SHA256 written apart from the production signer; the fixture's secrets are {@code whsec_} base64. */
    private static byte[] hmac(String secret, String prefix, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(Base64.getDecoder().decode(secret.substring("whsec_".length())), "HmacSHA256"));
            mac.update(prefix.getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
