package dev.runner.local.http;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class HttpToApiGatewayTest {

    @Test
    void aResponseObjectIsRenderedAsGiven() {
        var response = APIGatewayV2HTTPResponse.builder()
                .withStatusCode(202)
                .withHeaders(Map.of("Content-Type", "application/json"))
                .withMultiValueHeaders(Map.of("X-Many", List.of("a", "b")))
                .withCookies(List.of("s=1"))
                .withBody("{\"ok\":true}")
                .build();

        HttpToApiGateway.Response rendered = HttpToApiGateway.response(response);

        assertEquals(202, rendered.status());
        assertEquals(List.of("application/json"), rendered.headers().get("Content-Type"));
        assertEquals(List.of("a", "b"), rendered.headers().get("X-Many"));
        assertEquals(List.of("s=1"), rendered.headers().get("Set-Cookie"));
        assertEquals("{\"ok\":true}", new String(rendered.body(), StandardCharsets.UTF_8));
    }

    @Test
    void aBase64BodyIsDecoded() {
        byte[] bytes = {1, 2, (byte) 0xfe};
        var response = APIGatewayV2HTTPResponse.builder().withStatusCode(200)
                .withBody(Base64.getEncoder().encodeToString(bytes)).withIsBase64Encoded(true).build();

        assertArrayEquals(bytes, HttpToApiGateway.response(response).body());
    }

    @Test
    void anyOtherAnswerIsA200JsonBodyAsApiGatewayInfersIt() {
        HttpToApiGateway.Response rendered = HttpToApiGateway.response(Map.of("n", 1));

        assertEquals(200, rendered.status());
        assertEquals(List.of("application/json"), rendered.headers().get("Content-Type"));
        assertEquals("{\"n\":1}", new String(rendered.body(), StandardCharsets.UTF_8));
    }

    @Test
    void errorsAreTheJsonShapeOfEveryRunnerEndpoint() {
        HttpToApiGateway.Response error = HttpToApiGateway.error(404, "not_found", "no route for GET /x");

        assertEquals(404, error.status());
        assertEquals("{\"error\":\"not_found\",\"message\":\"no route for GET /x\"}", new String(error.body(), StandardCharsets.UTF_8));
    }
}
