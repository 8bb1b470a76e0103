package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.log.Log;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Inbound: an HTTP API (payload v2) event, its JSON, into the core's request; outbound: the core's
 * response into the answer API Gateway reads, {@code {"statusCode","headers","body","isBase64Encoded"}}.
 */
final class ApiGatewayToCore {

    private static final Log LOG = Log.of(ApiGatewayToCore.class);

    private ApiGatewayToCore() {}

    /**
     * One invocation: the event into a request, the core's answer back. Nothing escapes: a body that is not the
     * base64 the event claims is a 400, and a failure the core did not answer itself a logged 500.
     */
    static ObjectNode handle(JsonNode event, Function<ApiRequest, ApiResponse> core) {
        ApiRequest request;
        try {
            request = request(event);
        } catch (IllegalArgumentException e) {
            return response(ApiResponse.error(400, "bad_request", "the body is not the base64 the request says it is"));
        }
        try {
            return response(core.apply(request));
        } catch (RuntimeException e) {
            LOG.error("request failed", "method", request.method(), "error", e);
            return response(ApiResponse.error(500, "internal", "Runner failed on this request"));
        }
    }

    static ApiRequest request(JsonNode event) {
        Map<String, String> headers = new HashMap<>();
        LambdaJson.strings(event.get("headers")).forEach((name, value) -> headers.put(name.toLowerCase(Locale.ROOT), value));
        String body = LambdaJson.text(event.get("body"));
        byte[] bytes = body == null ? new byte[0]
                : event.path("isBase64Encoded").asBoolean(false) ? Base64.getDecoder().decode(body) : body.getBytes(StandardCharsets.UTF_8);
        String method = LambdaJson.text(event.path("requestContext").path("http").get("method"));
        return new ApiRequest(method != null ? method : routeMethod(LambdaJson.text(event.get("routeKey"))),
                LambdaJson.text(event.get("rawPath")), LambdaJson.strings(event.get("pathParameters")), headers,
                LambdaJson.strings(event.get("queryStringParameters")), bytes, iamPrincipal(event));
    }

    /**
     * The caller API Gateway verified with SigV4 (routes with {@code Authorizer: AWS_IAM}): its ARN.
     * Only the gateway writes the request context, so a client cannot claim one; null on routes
     * without the IAM authorizer.
     */
    private static String iamPrincipal(JsonNode event) {
        String arn = LambdaJson.text(event.path("requestContext").path("authorizer").path("iam").get("userArn"));
        return arn == null || arn.isBlank() ? null : arn;
    }

    private static String routeMethod(String routeKey) {
        return routeKey == null ? "GET" : routeKey.split(" ", 2)[0];
    }

    /** As the runtime client wrote the event library's response: absent fields left out, the body never base64. */
    static ObjectNode response(ApiResponse response) {
        ObjectNode answer = Json.object().put("statusCode", response.status());
        if (response.headers() != null) {
            ObjectNode headers = answer.putObject("headers");
            response.headers().forEach(headers::put);
        }
        if (response.body() != null) {
            answer.put("body", response.body());
        }
        return answer.put("isBase64Encoded", false);
    }
}
