package dev.runner.local.http;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.Headers;

import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * Turns an HTTP request into the API Gateway HTTP API event (payload format 2.0) and the
 * function's answer back into an HTTP response, following
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 */
public final class HttpToApiGateway {

    private static final DateTimeFormatter REQUEST_TIME =
            DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.US).withZone(ZoneOffset.UTC);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The parts of a request the event is built from. */
    public record Request(String method, String rawPath, String rawQuery, Headers headers, byte[] body,
                          String sourceIp, String host) {}

    /** What goes back on the wire. */
    public record Response(int status, Map<String, List<String>> headers, byte[] body) {}

    private HttpToApiGateway() {}

    public static APIGatewayV2HTTPEvent event(Request request, RouteTemplate route, Map<String, String> pathParameters,
                                              Instant now) {
        Map<String, String> headers = new LinkedHashMap<>();
        List<String> cookies = new ArrayList<>();
        request.headers().forEach((name, values) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (lower.equals("cookie")) {
                values.forEach(v -> List.of(v.split(";\\s*")).forEach(c -> {
                    if (!c.isBlank()) {
                        cookies.add(c.trim());
                    }
                }));
            } else {
                headers.merge(lower, String.join(",", values), (a, b) -> a + "," + b);
            }
        });
        String rawQuery = request.rawQuery() == null ? "" : request.rawQuery();
        Map<String, String> query = queryParameters(rawQuery);
        String body = null;
        boolean base64 = false;
        if (request.body().length > 0) {
            String text = textBody(headers.get("content-type"), request.body());
            if (text != null) {
                body = text;
            } else {
                body = Base64.getEncoder().encodeToString(request.body());
                base64 = true;
            }
        }
        String domain = request.host() == null ? "127.0.0.1" : request.host();
        var http = APIGatewayV2HTTPEvent.RequestContext.Http.builder()
                .withMethod(request.method())
                .withPath(request.rawPath())
                .withProtocol("HTTP/1.1")
                .withSourceIp(request.sourceIp())
                .withUserAgent(headers.get("user-agent"))
                .build();
        var context = APIGatewayV2HTTPEvent.RequestContext.builder()
                .withAccountId("000000000000")
                .withApiId("local")
                .withDomainName(domain)
                .withDomainPrefix(domain.contains(".") ? domain.substring(0, domain.indexOf('.')) : domain)
                .withHttp(http)
                .withRequestId(UUID.randomUUID().toString())
                .withRouteKey(route.routeKey())
                .withStage("$default")
                .withTime(REQUEST_TIME.format(now))
                .withTimeEpoch(now.toEpochMilli())
                .build();
        return APIGatewayV2HTTPEvent.builder()
                .withVersion("2.0")
                .withRouteKey(route.routeKey())
                .withRawPath(request.rawPath())
                .withRawQueryString(rawQuery)
                .withCookies(cookies.isEmpty() ? null : cookies)
                .withHeaders(headers)
                .withQueryStringParameters(query.isEmpty() ? null : query)
                .withPathParameters(pathParameters.isEmpty() ? null : pathParameters)
                .withBody(body)
                .withIsBase64Encoded(base64)
                .withRequestContext(context)
                .build();
    }

    /**
     * The function's answer as API Gateway renders it: a response object as given; anything else
     * is a 200 JSON body (API Gateway's inference for payload format 2.0).
     */
    public static Response response(Object result) {
        if (result instanceof APIGatewayV2HTTPResponse response) {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            if (response.getHeaders() != null) {
                response.getHeaders().forEach((k, v) -> headers.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
            }
            if (response.getMultiValueHeaders() != null) {
                response.getMultiValueHeaders().forEach((k, v) -> headers.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
            }
            if (response.getCookies() != null) {
                headers.computeIfAbsent("Set-Cookie", x -> new ArrayList<>()).addAll(response.getCookies());
            }
            byte[] body = response.getBody() == null ? new byte[0]
                    : response.getIsBase64Encoded() ? Base64.getDecoder().decode(response.getBody())
                    : response.getBody().getBytes(StandardCharsets.UTF_8);
            return new Response(response.getStatusCode() == 0 ? 200 : response.getStatusCode(), headers, body);
        }
        String body;
        if (result == null) {
            body = "";
        } else if (result instanceof String text) {
            body = text;
        } else {
            try {
                body = JSON.writeValueAsString(result);
            } catch (JsonProcessingException e) {
                return error(500, "internal_error", "the function's answer is not JSON-serialisable");
            }
        }
        return new Response(200, Map.of("Content-Type", List.of("application/json")), body.getBytes(StandardCharsets.UTF_8));
    }

    /** The JSON error shape every Runner endpoint answers with. */
    public static Response error(int status, String error, String message) {
        var body = JSON.createObjectNode().put("error", error).put("message", message);
        return new Response(status, Map.of("Content-Type", List.of("application/json")),
                body.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> queryParameters(String rawQuery) {
        Map<String, String> parameters = new LinkedHashMap<>();
        if (rawQuery.isEmpty()) {
            return parameters;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = decode(equals < 0 ? pair : pair.substring(0, equals));
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1));
            parameters.merge(name, value, (a, b) -> a + "," + b);
        }
        return parameters;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    /** The body as text when its type is textual and it is valid UTF-8; null means binary (base64). */
    private static String textBody(String contentType, byte[] body) {
        String type = contentType == null ? "" : contentType.toLowerCase(Locale.ROOT);
        boolean textual = type.isEmpty() || type.startsWith("text/") || type.contains("json") || type.contains("xml")
                || type.contains("javascript") || type.contains("x-www-form-urlencoded") || type.contains("yaml");
        if (!textual) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
