package dev.runner.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

import java.util.Map;

/** An HTTP response: status and a JSON body. Errors are always {@code {error, message}}. */
public record ApiResponse(int status, Map<String, String> headers, String body) {

    private static final Map<String, String> JSON = Map.of("content-type", "application/json");

    public static ApiResponse json(int status, JsonNode body) {
        return new ApiResponse(status, JSON, Json.write(body));
    }

    /** The same response with one more header (name lower-case, as every header here). */
    public ApiResponse withHeader(String name, String value) {
        Map<String, String> more = new java.util.LinkedHashMap<>(headers);
        more.put(name.toLowerCase(java.util.Locale.ROOT), value);
        return new ApiResponse(status, Map.copyOf(more), body);
    }

    /** @param error a stable machine-readable code, e.g. {@code bad_signature} */
    public static ApiResponse error(int status, String error, String message) {
        return json(status, Json.object().put("error", error).put("message", message));
    }
}
