package dev.runner.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A tenant's use of an integration type (DESIGN 3.2). The webhook secret is write-only: it is
 * never serialised back (the API answers {@code webhookSecretSet}) and never logged.
 */
public record TenantIntegration(String tenantId, String integrationKey, boolean enabled, String webhookSecret,
                                JsonNode settings, Map<String, String> schedules) {

    public static final Pattern TENANT = IntegrationType.KEY;

    public TenantIntegration {
        schedules = Map.copyOf(schedules);
    }

    @Override
    public String toString() {
        return "TenantIntegration[" + tenantId + "/" + integrationKey + ", enabled=" + enabled + "]";
    }

    public static TenantIntegration fromJson(String tenantId, String integrationKey, JsonNode node) {
        Json.requireObject(node, "body");
        IntegrationType.requireKey("tenantId", tenantId);
        IntegrationType.requireKey("integrationKey", integrationKey);
        for (String field : new String[] {"tenantId", "integrationKey"}) {
            String inBody = Json.optionalText(node, field);
            String inPath = field.equals("tenantId") ? tenantId : integrationKey;
            if (inBody != null && !inBody.equals(inPath)) {
                throw new Json.InvalidJsonException(field + " in the body (" + inBody + ") differs from the path (" + inPath + ")");
            }
        }
        JsonNode enabled = node.get("enabled");
        if (enabled != null && !enabled.isBoolean()) {
            throw new Json.InvalidJsonException("enabled must be true or false");
        }
        String secret = Json.optionalText(node, "webhookSecret");
        if (secret != null && secret.length() < 16) {
            throw new Json.InvalidJsonException("webhookSecret must have at least 16 characters");
        }
        JsonNode settings = node.get("settings");
        if (settings != null && !settings.isNull() && !settings.isObject()) {
            throw new Json.InvalidJsonException("settings must be a JSON object");
        }
        Map<String, String> schedules = new LinkedHashMap<>();
        JsonNode schedulesNode = node.get("schedules");
        if (schedulesNode != null && !schedulesNode.isNull()) {
            Json.requireObject(schedulesNode, "schedules");
            schedulesNode.properties().forEach(entry -> {
                if (!entry.getValue().isTextual()) {
                    throw new Json.InvalidJsonException("schedules." + entry.getKey() + " must be a string such as rate(15 minutes)");
                }
                schedules.put(entry.getKey(), entry.getValue().asText());
            });
        }
        return new TenantIntegration(tenantId, integrationKey, enabled == null || enabled.asBoolean(), secret,
                settings == null || settings.isNull() ? Json.object() : settings, schedules);
    }

    /** The API's view: everything but the secret. */
    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("tenantId", tenantId);
        node.put("integrationKey", integrationKey);
        node.put("enabled", enabled);
        node.put("webhookSecretSet", webhookSecret != null);
        node.set("settings", settings);
        ObjectNode schedulesNode = node.putObject("schedules");
        schedules.forEach(schedulesNode::put);
        return node;
    }
}
