package dev.runner.local.demo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * Registers the demo integration through the management API, as a user would: integration
 * type {@code crm-demo} with handler {@code contacts} served by {@link DemoHandlerService}, and
 * tenant {@code t-demo} with webhook secret {@link #WEBHOOK_SECRET} and a five-minute schedule.
 */
public final class DemoIntegration {

    public static final String INTEGRATION_KEY = "crm-demo";
    public static final String HANDLER_KEY = "contacts";
    /**
     * A second handler of the demo type that keeps records: a contact's updates go one at a time, in order, and a
     * burst of them within two seconds is one call with the latest (docs/item-lifecycle.md, one record at a time).
     */
    public static final String UPDATES_HANDLER_KEY = "contact-updates";
    public static final String TENANT_ID = "t-demo";
    /**
     * A secret as Standard Webhooks serialises them ({@code whsec_} + base64 of the key), so the standard's own
     * libraries sign with it as they are; the README's openssl example decodes it. Public: a demo only.
     */
    public static final String WEBHOOK_SECRET = "whsec_cnVubmVyLWRlbW8td2ViaG9vay1rZXkh";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI api;
    private final String apiKey;

    public DemoIntegration(URI api, String apiKey) {
        this.api = api;
        this.apiKey = apiKey;
    }

    /** PUTs the type and the tenant integration; throws with the API's answer when it refuses. */
    public void install(DemoHandlerService handlers) {
        ObjectNode type = type(INTEGRATION_KEY, handlers.url(INTEGRATION_KEY, HANDLER_KEY));
        ObjectNode updates = ((ObjectNode) type.path("handlers").path(HANDLER_KEY)).deepCopy()
                .put("url", handlers.url(INTEGRATION_KEY, UPDATES_HANDLER_KEY));
        ((ObjectNode) updates.path("configs")).put("ordered_by_record", true).put("coalesce_ms", 2_000);
        ((ObjectNode) type.path("handlers")).set(UPDATES_HANDLER_KEY, updates);
        put("/types/" + INTEGRATION_KEY, type);
        put("/tenants/" + TENANT_ID + "/integrations/" + INTEGRATION_KEY,
                tenantIntegration(TENANT_ID, INTEGRATION_KEY, WEBHOOK_SECRET, Json.object()));
    }

    /** An integration type (docs/integration-types.md) with one batch-capable inbound handler. */
    public static ObjectNode type(String integrationKey, String handlerUrl) {
        ObjectNode configs = Json.object()
                .put("concurrency", 5)
                .put("rate_limit_per_minute", 6000)
                .put("batch_size", 10)
                .put("timeout_ms", 5000);
        ObjectNode handler = Json.object().put("url", handlerUrl).put("direction", "inbound").put("batch", true);
        handler.set("configs", configs);
        ObjectNode handlers = Json.object();
        handlers.set(HANDLER_KEY, handler);
        ObjectNode type = Json.object().put("integrationKey", integrationKey).put("name", "CRM demo");
        type.set("handlers", handlers);
        return type;
    }

    /** A tenant integration (docs/integration-types.md) with the demo schedule. */
    public static ObjectNode tenantIntegration(String tenantId, String integrationKey, String webhookSecret, ObjectNode settings) {
        ObjectNode body = Json.object()
                .put("tenantId", tenantId)
                .put("integrationKey", integrationKey)
                .put("enabled", true)
                .put("webhookSecret", webhookSecret);
        body.set("settings", settings);
        body.set("schedules", Json.object().put(HANDLER_KEY, "rate(5 minutes)"));
        return body;
    }

    private void put(String path, ObjectNode body) {
        var request = HttpRequest.newBuilder(api.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + apiKey)
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() / 100 != 2) {
                throw new IllegalStateException("PUT " + path + " answered " + response.statusCode() + " " + response.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("PUT " + path + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during PUT " + path, e);
        }
    }
}
