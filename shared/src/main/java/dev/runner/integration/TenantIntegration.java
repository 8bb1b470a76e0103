package dev.runner.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A tenant's use of an integration type (docs/integration-types.md). Its webhook secrets are write-only: never
 * serialised back (the API answers {@code webhookSecretSet} and {@code webhookSecretCount}) and
 * never logged.
 *
 * @param webhookSecrets the secrets webhooks (and signed ingest messages) may be signed with, current first; more
 *                       than one only during a rotation. Empty: none set. In an update, null keeps the stored ones.
 * @param weight         its share of a handler's concurrency and rate when tenants compete ({@value #DEFAULT_WEIGHT} unless an
 *                       operator set another); in an update, null keeps the stored one
 */
public record TenantIntegration(String tenantId, String integrationKey, boolean enabled, List<String> webhookSecrets,
                                JsonNode settings, Map<String, String> schedules, Integer weight) {

    public static final Pattern TENANT = IntegrationType.KEY;
    public static final int DEFAULT_WEIGHT = 1;
    public static final int MAX_WEIGHT = 1000;

    public TenantIntegration(String tenantId, String integrationKey, boolean enabled, List<String> webhookSecrets,
                             JsonNode settings, Map<String, String> schedules) {
        this(tenantId, integrationKey, enabled, webhookSecrets, settings, schedules, null);
    }

    /** The weight that applies: the one set, else the default. */
    public int weightOrDefault() {
        return weight == null ? DEFAULT_WEIGHT : weight;
    }
    /** Secrets accepted at once: the current one and those still in use by senders mid-rotation. */
    public static final int MAX_WEBHOOK_SECRETS = 3;
    private static final int MIN_SECRET_LENGTH = 16;
    private static final int MAX_SECRET_LENGTH = 1024;
    /** Settings go with every fetch call to the handler and into every cached copy: a few KiB of configuration, not data. */
    public static final int MAX_SETTINGS_BYTES = 16 * 1024;

    public TenantIntegration {
        webhookSecrets = webhookSecrets == null ? null : List.copyOf(webhookSecrets);
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
        List<String> secrets = secrets(node);
        JsonNode settings = node.get("settings");
        if (settings != null && !settings.isNull() && !settings.isObject()) {
            throw new Json.InvalidJsonException("settings must be a JSON object");
        }
        if (settings != null && Json.write(settings).contains("\\u0000")) {
            throw new Json.InvalidJsonException("settings contain \\u0000, which Postgres cannot store");
        }
        int settingsBytes = settings == null ? 0 : Json.write(settings).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (settingsBytes > MAX_SETTINGS_BYTES) {
            throw new Json.InvalidJsonException("settings are " + settingsBytes + " bytes as JSON; at most " + MAX_SETTINGS_BYTES);
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
        JsonNode weight = node.get("weight");
        if (weight != null && !weight.isNull() && (!weight.canConvertToInt() || !weight.isIntegralNumber()
                || weight.asInt() < 1 || weight.asInt() > MAX_WEIGHT)) {
            throw new Json.InvalidJsonException("weight must be an integer from 1 to " + MAX_WEIGHT);
        }
        return new TenantIntegration(tenantId, integrationKey, enabled == null || enabled.asBoolean(), secrets,
                settings == null || settings.isNull() ? Json.object() : settings, schedules,
                weight == null || weight.isNull() ? null : weight.asInt());
    }

    /** The API's view: everything but the secret. */
    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("tenantId", tenantId);
        node.put("integrationKey", integrationKey);
        node.put("enabled", enabled);
        node.put("webhookSecretSet", webhookSecrets != null && !webhookSecrets.isEmpty());
        node.put("webhookSecretCount", webhookSecrets == null ? 0 : webhookSecrets.size());
        node.put("weight", weightOrDefault());
        node.set("settings", settings);
        ObjectNode schedulesNode = node.putObject("schedules");
        schedules.forEach(schedulesNode::put);
        return node;
    }

    /**
     * {@code webhookSecret} (one secret) or {@code webhookSecrets} (current first, then those still accepted during a
     * rotation), not both; null when neither is given. Messages name the field, never a secret.
     */
    private static List<String> secrets(JsonNode node) {
        JsonNode one = node.get("webhookSecret");
        JsonNode many = node.get("webhookSecrets");
        boolean hasOne = one != null && !one.isNull();
        boolean hasMany = many != null && !many.isNull();
        if (hasOne && hasMany) {
            throw new Json.InvalidJsonException("give webhookSecret or webhookSecrets, not both");
        }
        if (hasOne) {
            return List.of(secret(one, "webhookSecret"));
        }
        if (!hasMany) {
            return null;
        }
        if (!many.isArray() || many.isEmpty() || many.size() > MAX_WEBHOOK_SECRETS) {
            throw new Json.InvalidJsonException("webhookSecrets must be an array of 1 to " + MAX_WEBHOOK_SECRETS
                    + " secrets, the current one first");
        }
        List<String> secrets = new ArrayList<>(many.size());
        for (int i = 0; i < many.size(); i++) {
            secrets.add(secret(many.get(i), "webhookSecrets[" + i + "]"));
        }
        return secrets;
    }

    private static String secret(JsonNode value, String field) {
        if (!value.isTextual()) {
            throw new Json.InvalidJsonException(field + " must be a string");
        }
        String secret = value.asText();
        if (secret.length() < MIN_SECRET_LENGTH || secret.length() > MAX_SECRET_LENGTH) {
            throw new Json.InvalidJsonException(field + " must have " + MIN_SECRET_LENGTH + " to " + MAX_SECRET_LENGTH + " characters");
        }
        if (secret.indexOf('\u0000') >= 0) {
            throw new Json.InvalidJsonException(field + " must not contain \\u0000");
        }
        return secret;
    }
}
