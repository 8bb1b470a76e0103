package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.log.Log;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Inbound: an HTTP API (payload v2) event into the core's request; outbound: the core's response
 * into the answer API Gateway reads.
 */
final class ApiGatewayToCore {

    private static final Log LOG = Log.of(ApiGatewayToCore.class);

    private ApiGatewayToCore() {}

    /**
     * One invocation: the event into a request, the core's answer back. Nothing escapes: a body that is not the
     * base64 the event claims is a 400, and a failure the core did not answer itself a logged 500.
     */
    static APIGatewayV2HTTPResponse handle(APIGatewayV2HTTPEvent event, Function<ApiRequest, ApiResponse> core) {
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

    /** A null event (or part of one) is an empty one. */
    static ApiRequest request(APIGatewayV2HTTPEvent event) {
        if (event == null) {
            event = new APIGatewayV2HTTPEvent();
        }
        Map<String, String> headers = new HashMap<>();
        LambdaSerialization.withoutNulls(event.getHeaders()).forEach((name, value) -> headers.put(name.toLowerCase(Locale.ROOT), value));
        String body = event.getBody();
        byte[] bytes = body == null ? new byte[0]
                : event.getIsBase64Encoded() ? Base64.getDecoder().decode(body) : body.getBytes(StandardCharsets.UTF_8);
        var context = event.getRequestContext();
        String method = context == null || context.getHttp() == null ? null : context.getHttp().getMethod();
        return new ApiRequest(method != null ? method : routeMethod(event.getRouteKey()),
                event.getRawPath(), LambdaSerialization.withoutNulls(event.getPathParameters()), headers,
                LambdaSerialization.withoutNulls(event.getQueryStringParameters()), bytes, iamPrincipal(context));
    }

    /**
     * The caller API Gateway verified with SigV4 (routes with {@code Authorizer: AWS_IAM}): its ARN.
     * Only the gateway writes the request context, so a client cannot claim one; null on routes
     * without the IAM authorizer.
     */
    private static String iamPrincipal(APIGatewayV2HTTPEvent.RequestContext context) {
        if (context == null || context.getAuthorizer() == null || context.getAuthorizer().getIam() == null) {
            return null;
        }
        String arn = context.getAuthorizer().getIam().getUserArn();
        return arn == null || arn.isBlank() ? null : arn;
    }

    private static String routeMethod(String routeKey) {
        return routeKey == null ? "GET" : routeKey.split(" ", 2)[0];
    }

    /** The body never base64. */
    static APIGatewayV2HTTPResponse response(ApiResponse response) {
        return APIGatewayV2HTTPResponse.builder().withStatusCode(response.status())
                .withHeaders(response.headers() == null ? null : new HashMap<>(response.headers()))
                .withBody(response.body()).withIsBase64Encoded(false).build();
    }
}
