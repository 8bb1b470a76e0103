package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * Lambda's JSON, read and written with Runner's own Jackson instead of the runtime client's POJO
 * serializer (its shaded Jackson, event mix-ins and Joda-Time are most of a hello-world's cold
 * start). Events are read as leniently as that serializer read them into the event classes: a
 * missing, null or mistyped field is an absent one.
 */
final class LambdaJson {

    private LambdaJson() {}

    /** The invocation's event; an empty stream reads as JSON null, which every reader here takes as an empty event. */
    static JsonNode read(InputStream input) throws IOException {
        byte[] bytes = input.readAllBytes();
        return bytes.length == 0 ? NullNode.getInstance() : Json.parse(bytes);
    }

    static void write(JsonNode answer, OutputStream output) throws IOException {
        output.write(Json.writeBytes(answer));
    }

    /** A scalar field as text (the event classes' String fields took numbers and booleans too); null otherwise. */
    static String text(JsonNode value) {
        return value == null || !value.isValueNode() || value.isNull() ? null : value.asText();
    }

    /** An object of strings, entries without a text value left out; empty when it is not an object. */
    static Map<String, String> strings(JsonNode object) {
        Map<String, String> strings = new HashMap<>();
        if (object != null) {
            object.properties().forEach(entry -> {
                String value = text(entry.getValue());
                if (value != null) {
                    strings.put(entry.getKey(), value);
                }
            });
        }
        return strings;
    }
}
