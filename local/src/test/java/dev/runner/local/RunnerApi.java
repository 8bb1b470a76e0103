package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.local.demo.DemoIntegration;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;

/**
 * A user of the local runtime over HTTP only: the management API with the bearer key, signed webhooks.
 * Public for the fault run ({@code dev.runner.local.faults}), which the benchmarks run too. Every
 * answer goes through an {@link AnswerCheck} first: the integration tests pass the OpenAPI
 * document's ({@code OpenApiAnswers}), so what they receive is what the document says.
 */
public final class RunnerApi {

    /** An answer: status and JSON body. */
    public record Answer(int status, JsonNode body) {}

    /** Looks at every answer before the caller does; throws to fail the test. */
    @FunctionalInterface
    public interface AnswerCheck {
        void check(String method, String path, int status, String body);

        AnswerCheck NONE = (method, path, status, body) -> { };
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI base;
    private final String apiKey;
    private final AnswerCheck check;

    public RunnerApi(URI base, String apiKey) {
        this(base, apiKey, AnswerCheck.NONE);
    }

    public RunnerApi(URI base, String apiKey, AnswerCheck check) {
        this.base = base;
        this.apiKey = apiKey;
        this.check = check;
    }

    public Answer get(String path) {
        return send(request(path).GET());
    }

    public Answer put(String path, JsonNode body) {
        return send(request(path).PUT(HttpRequest.BodyPublishers.ofString(Json.write(body))));
    }

    public Answer post(String path, JsonNode body) {
        return send(request(path).POST(HttpRequest.BodyPublishers.ofString(Json.write(body))));
    }

    /** Registers an integration type whose one handler is the demo service, with the given configs. */
    public void putType(String integrationKey, String handlerUrl, int concurrency, int ratePerMinute) {
        ObjectNode type = DemoIntegration.type(integrationKey, handlerUrl);
        ObjectNode configs = (ObjectNode) type.path("handlers").path(DemoIntegration.HANDLER_KEY).path("configs");
        configs.put("concurrency", concurrency).put("rate_limit_per_minute", ratePerMinute);
        require(put("/types/" + integrationKey, type), 200);
    }

    /** A tenant of the integration with demo handler settings (pages, pageSize, fail, delayMs). */
    public void putTenant(String tenantId, String integrationKey, String webhookSecret, ObjectNode settings) {
        ObjectNode body = DemoIntegration.tenantIntegration(tenantId, integrationKey, webhookSecret, settings);
        body.putObject("schedules");
        require(put("/tenants/" + tenantId + "/integrations/" + integrationKey, body), 200);
    }

    public String startRun(String tenantId, String integrationKey) {
        Answer answer = require(post("/runs", Json.object().put("tenantId", tenantId).put("integrationKey", integrationKey)
                .put("handlerKey", DemoIntegration.HANDLER_KEY)), 202);
        return answer.body().path("runId").asText();
    }

    /** A new tenant key (POST /keys): the key itself, shown only in this answer. */
    String createKey(String tenantId, String name) {
        return require(post("/keys", Json.object().put("tenantId", tenantId).put("name", name)), 201).body().path("key").asText();
    }

    /**
     * POSTs a webhook signed with Standard Webhooks, as docs/webhooks.md says: {@code webhook-signature:
     * v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>}, the key a {@code whsec_} secret's decoded
     * base64 or any other secret's UTF-8 bytes.
     */
    public Answer webhook(String tenantId, String integrationKey, String secret, String body) {
        return webhook(tenantId, integrationKey, secret, body, "msg_" + java.util.UUID.randomUUID());
    }

    /** The same, as delivery {@code id}: a sender sends a delivery it retries, or sends again, under its first id. */
    public Answer webhook(String tenantId, String integrationKey, String secret, String body, String id) {
        String timestamp = Long.toString(Instant.now().getEpochSecond());
        byte[] key = secret.startsWith("whsec_") ? java.util.Base64.getDecoder().decode(secret.substring(6))
                : secret.getBytes(StandardCharsets.UTF_8);
        String signature = "v1," + java.util.Base64.getEncoder().encodeToString(hmac(key, id + "." + timestamp + "." + body));
        return send(HttpRequest.newBuilder(base.resolve("/webhooks/" + tenantId + "/" + integrationKey + "/" + DemoIntegration.HANDLER_KEY))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("webhook-id", id)
                .header("webhook-timestamp", timestamp)
                .header("webhook-signature", signature)
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    public JsonNode run(String runId) {
        return require(get("/runs/" + runId), 200).body();
    }

    public static Answer require(Answer answer, int status) {
        if (answer.status() != status) {
            throw new AssertionError("expected " + status + ", got " + answer.status() + " " + answer.body());
        }
        return answer;
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + apiKey)
                .header("Content-Type", "application/json");
    }

    public Answer delete(String path) {
        return send(request(path).DELETE());
    }

    private Answer send(HttpRequest.Builder builder) {
        try {
            HttpRequest request = builder.build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            check.check(request.method(), request.uri().getRawPath(), response.statusCode(), response.body());
            JsonNode body = response.body().isBlank() ? Json.object() : Json.parse(response.body());
            return new Answer(response.statusCode(), body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static byte[] hmac(byte[] key, String text) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
