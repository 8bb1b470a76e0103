package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The management API over HTTP (docs/management-api.md): JSON in and out, authenticated with a
 * bearer key or, for a stack deployed with ManagementAuth=iam, signed with SigV4.
 */
final class ApiClient {

    static final ObjectMapper JSON = new ObjectMapper();

    /** An answer: status and body ({@link NullNode} when there is none). */
    record Answer(int status, JsonNode body) {
        boolean ok() {
            return status >= 200 && status < 300;
        }

        /** The API's {@code {error, message}}, or the status alone. */
        String problem() {
            String message = body.path("message").asText("");
            return status + " " + body.path("error").asText("error") + (message.isEmpty() ? "" : ": " + message);
        }
    }

    /** How a request proves who sends it. */
    sealed interface Credentials {
        record BearerKey(String key) implements Credentials {}

        record Iam(SigV4Signing signing) implements Credentials {}

        record None() implements Credentials {}
    }

    /** A call that got no answer: the endpoint is unreachable or the connection broke. */
    static final class Unreachable extends RuntimeException {
        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Headers java.net.http sets itself and refuses to be given. */
    private static final Set<String> RESTRICTED = Set.of("host", "content-length", "connection", "expect", "upgrade");

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final URI endpoint;
    private final Credentials credentials;

    ApiClient(URI endpoint, Credentials credentials) {
        this.endpoint = endpoint;
        this.credentials = credentials;
    }

    Answer get(String path, Map<String, String> query) {
        return send("GET", path + queryString(query), null, Map.of());
    }

    Answer post(String path, JsonNode body, Map<String, String> extraHeaders) {
        return send("POST", path, body, extraHeaders);
    }

    Answer delete(String path) {
        return send("DELETE", path, null, Map.of());
    }

    private Answer send(String method, String pathAndQuery, JsonNode body, Map<String, String> extraHeaders) {
        String base = endpoint.toString().replaceAll("/+$", "");
        URI uri = URI.create(base + pathAndQuery);
        byte[] bytes = body == null ? new byte[0] : write(body);
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("accept", "application/json");
        if (body != null) {
            headers.put("content-type", "application/json");
        }
        headers.putAll(extraHeaders);
        switch (credentials) {
            case Credentials.BearerKey bearer -> headers.put("authorization", "Bearer " + bearer.key());
            case Credentials.Iam iam -> headers.putAll(iam.signing().sign(method, uri, headers, bytes));
            case Credentials.None none -> { }
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(bytes));
        headers.forEach((name, value) -> {
            if (!RESTRICTED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                request.header(name, value);
            }
        });
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), parse(response.body()));
        } catch (IOException e) {
            throw new Unreachable("no answer from " + base + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unreachable("interrupted while calling " + base, e);
        }
    }

    static String queryString(Map<String, String> query) {
        StringJoiner joined = new StringJoiner("&", "?", "");
        joined.setEmptyValue("");
        query.forEach((name, value) -> {
            if (value != null) {
                joined.add(URLEncoder.encode(name, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8));
            }
        });
        return joined.toString();
    }

    /** A path segment, percent-encoded. */
    static String segment(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static JsonNode parse(String text) {
        if (text == null || text.isBlank()) {
            return NullNode.getInstance();
        }
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            return JSON.getNodeFactory().objectNode().put("error", "not_json").put("message", text.length() > 200 ? text.substring(0, 200) : text);
        }
    }

    private static byte[] write(JsonNode body) {
        try {
            return JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /** The headers a signed request needs (a list-valued header joined as HTTP would). */
    static Map<String, String> single(Map<String, List<String>> headers) {
        Map<String, String> out = new LinkedHashMap<>();
        headers.forEach((name, values) -> out.put(name, String.join(",", values)));
        return out;
    }
}
