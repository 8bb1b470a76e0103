package dev.runner.integration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.security.WebhookScheme;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An integration type (docs/integration-types.md): a name, its handlers by key, how its webhooks are signed
 * ({@code webhookScheme}: standard, github, stripe or shopify; standard when absent), and whether tenant keys may
 * subscribe to it themselves ({@code openToTenants}, true when absent; false: only the operator subscribes tenants).
 * Cached by integration key.
 */
public record IntegrationType(String integrationKey, String name, Map<String, HandlerSpec> handlers, WebhookScheme webhookScheme,
                              boolean openToTenants) {

    /** Keys appear in URLs, queue message fields and Redis hash tags: keep them plain. */
    public static final Pattern KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

    public IntegrationType {
        handlers = Collections.unmodifiableMap(new LinkedHashMap<>(handlers));
        webhookScheme = webhookScheme == null ? WebhookScheme.DEFAULT : webhookScheme;
    }

    public Optional<HandlerSpec> handler(String handlerKey) {
        return Optional.ofNullable(handlers.get(handlerKey));
    }

    public static String requireKey(String what, String value) {
        if (value == null || !KEY.matcher(value).matches()) {
            throw new Json.InvalidJsonException(what + " must match " + KEY.pattern() + ": " + value);
        }
        return value;
    }

    /** From the management API's body; the path's key wins and must agree with the body's, if any. */
    public static IntegrationType fromJson(String integrationKey, JsonNode node) {
        Json.requireObject(node, "body");
        requireKey("integrationKey", integrationKey);
        String bodyKey = Json.optionalText(node, "integrationKey");
        if (bodyKey != null && !bodyKey.equals(integrationKey)) {
            throw new Json.InvalidJsonException("integrationKey in the body (" + bodyKey + ") differs from the path (" + integrationKey + ")");
        }
        JsonNode handlersNode = node.get("handlers");
        if (handlersNode == null || !handlersNode.isObject() || handlersNode.isEmpty()) {
            throw new Json.InvalidJsonException("handlers must be a non-empty object");
        }
        Map<String, HandlerSpec> handlers = new LinkedHashMap<>();
        handlersNode.properties().forEach(entry -> {
            requireKey("handler key", entry.getKey());
            handlers.put(entry.getKey(), HandlerSpec.fromJson(entry.getKey(), entry.getValue()));
        });
        String name = Json.optionalText(node, "name");
        WebhookScheme scheme;
        try {
            scheme = WebhookScheme.fromWire(Json.optionalText(node, "webhookScheme"));
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException(e.getMessage());
        }
        JsonNode open = node.get("openToTenants");
        if (open != null && !open.isNull() && !open.isBoolean()) {
            throw new Json.InvalidJsonException("openToTenants must be true or false");
        }
        return new IntegrationType(integrationKey, name == null ? integrationKey : name, handlers, scheme,
                open == null || open.isNull() || open.asBoolean());
    }

    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("integrationKey", integrationKey);
        node.put("name", name);
        node.put("webhookScheme", webhookScheme.wireName());
        node.put("openToTenants", openToTenants);
        ObjectNode handlersNode = node.putObject("handlers");
        handlers.forEach((key, spec) -> handlersNode.set(key, spec.toJson()));
        return node;
    }
}
