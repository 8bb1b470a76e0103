package dev.runner.http;

import java.util.Locale;
import java.util.Map;

/**
 * An HTTP request as the core sees it, whatever carried it (API Gateway, the local runtime).
 * Header names are lower-case; {@code body} is the raw bytes (signatures are over them).
 *
 * @param principal who the gateway in front authenticated (an IAM ARN when the route requires
 *                  SigV4), never taken from a header; null when the gateway checked nothing
 */
public record ApiRequest(String method, String path, Map<String, String> pathParameters, Map<String, String> headers,
                         Map<String, String> query, byte[] body, String principal) {

    public ApiRequest {
        pathParameters = pathParameters == null ? Map.of() : Map.copyOf(pathParameters);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        query = query == null ? Map.of() : Map.copyOf(query);
        body = body == null ? new byte[0] : body;
    }

    /** A request no gateway authenticated. */
    public ApiRequest(String method, String path, Map<String, String> pathParameters, Map<String, String> headers,
                      Map<String, String> query, byte[] body) {
        this(method, path, pathParameters, headers, query, body, null);
    }

    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }

    public String pathParameter(String name) {
        return pathParameters.get(name);
    }

    /** The same request with the path parameters a route bound. */
    public ApiRequest withPathParameters(Map<String, String> parameters) {
        return new ApiRequest(method, path, parameters, headers, query, body, principal);
    }
}
