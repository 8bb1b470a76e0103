package dev.runner.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * JSON through Jackson's tree model only: messages and contracts are read and written field by
 * field by their own records, so nothing depends on reflective data binding (cold start) and
 * every missing or mistyped field gets a message that names it.
 */
public final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private Json() {}

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    public static ArrayNode array() {
        return JsonNodeFactory.instance.arrayNode();
    }

    /** Parses or throws {@link InvalidJsonException} with a short reason (never the whole input). */
    public static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidJsonException("body is empty");
        }
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new InvalidJsonException("not valid JSON: " + e.getOriginalMessage());
        }
    }

    public static JsonNode parse(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            throw new InvalidJsonException("body is empty");
        }
        try {
            return MAPPER.readTree(bytes);
        } catch (java.io.IOException e) {
            throw new InvalidJsonException("not valid JSON: " + (e instanceof JsonProcessingException p ? p.getOriginalMessage() : e.getMessage()));
        }
    }

    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    public static byte[] writeBytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /** A required text field, or {@link InvalidJsonException} naming it. */
    public static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw new InvalidJsonException(field + " is missing");
        }
        if (!value.isTextual() || value.asText().isBlank()) {
            throw new InvalidJsonException(field + " must be a non-empty string");
        }
        return value.asText();
    }

    /** An optional text field: null when absent or JSON null. */
    public static String optionalText(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw new InvalidJsonException(field + " must be a string");
        }
        return value.asText();
    }

    public static int optionalInt(JsonNode node, String field, int fallback) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber()) {
            throw new InvalidJsonException(field + " must be an integer");
        }
        return value.intValue();
    }

    public static ObjectNode requireObject(JsonNode node, String what) {
        if (node == null || !node.isObject()) {
            throw new InvalidJsonException(what + " must be a JSON object");
        }
        return (ObjectNode) node;
    }

    /** Input that is not the JSON we expect; its message is safe to show the caller. */
    public static final class InvalidJsonException extends IllegalArgumentException {
        public InvalidJsonException(String message) {
            super(message);
        }
    }
}
