package dev.runner.http;

import java.util.Map;

/**
 * An HTTP request as the core sees it, whatever carried it (API Gateway, the local runtime).
 * Header names are lower-case; {@code body} is the raw bytes (signatures are over them).
 */
public record ApiRequest(String method, String path, Map<String, String> pathParameters, Map<String, String> headers,
                         Map<String, String> query, byte[] body) {

    public ApiRequest {
        pathParameters = pathParameters == null ? Map.of() : Map.copyOf(pathParameters);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        query = query == null ? Map.of() : Map.copyOf(query);
        body = body == null ? new byte[0] : body;
    }

    public String header(String name) {
        return headers.get(name.toLowerCase(java.util.Locale.ROOT));
    }

    public String pathParameter(String name) {
        return pathParameters.get(name);
    }
}
