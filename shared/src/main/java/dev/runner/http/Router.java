package dev.runner.http;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Method + path template → handler, matched by segments ({@code /runs/{runId}/items}). The core
 * routes by itself so it does not depend on how the gateway in front names its routes.
 */
public final class Router {

    private record Route(String method, String[] segments, Function<ApiRequest, ApiResponse> handler) {}

    private final List<Route> routes = new ArrayList<>();

    public Router on(String method, String template, Function<ApiRequest, ApiResponse> handler) {
        routes.add(new Route(method, split(template), handler));
        return this;
    }

    public ApiResponse route(ApiRequest request) {
        String[] path = split(request.path());
        boolean pathKnown = false;
        for (Route route : routes) {
            Map<String, String> parameters = match(route.segments(), path);
            if (parameters == null) {
                continue;
            }
            pathKnown = true;
            if (route.method().equalsIgnoreCase(request.method())) {
                Map<String, String> merged = new HashMap<>(request.pathParameters());
                merged.putAll(parameters);
                return route.handler().apply(request.withPathParameters(merged));
            }
        }
        return pathKnown
                ? ApiResponse.error(405, "method_not_allowed", request.method() + " is not allowed on " + request.path())
                : ApiResponse.error(404, "not_found", "no route " + request.method() + " " + request.path());
    }

    private static Map<String, String> match(String[] template, String[] path) {
        if (template.length != path.length) {
            return null;
        }
        Map<String, String> parameters = new HashMap<>();
        for (int i = 0; i < template.length; i++) {
            String segment = template[i];
            if (segment.startsWith("{") && segment.endsWith("}")) {
                String value = decode(path[i]);
                if (value == null || value.isEmpty()) {
                    return null;
                }
                parameters.put(segment.substring(1, segment.length() - 1), value);
            } else if (!segment.equals(path[i])) {
                return null;
            }
        }
        return parameters;
    }

    /**
     * A segment's percent-decoding; null (no route) when it is not valid percent-encoding or decodes to a NUL, which
     * no key holds and Postgres cannot take. Found by the management API fuzz suite (both were 503s).
     */
    private static String decode(String segment) {
        try {
            String value = java.net.URLDecoder.decode(segment, java.nio.charset.StandardCharsets.UTF_8);
            return value.indexOf('\u0000') >= 0 ? null : value;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static String[] split(String path) {
        String trimmed = path == null ? "" : path.strip();
        int query = trimmed.indexOf('?');
        if (query >= 0) {
            trimmed = trimmed.substring(0, query);
        }
        while (trimmed.startsWith("/")) {
            trimmed = trimmed.substring(1);
        }
        while (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed.isEmpty() ? new String[0] : trimmed.split("/", -1);
    }
}
