package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.queue.QueueMessage;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The event library's HTTP and SQS events, as the functions read them, into the
 * core's requests and messages: bodies decoded, and events with missing or null parts read as
 * ones without them.
 */
class ApiAndSqsEventsTest {

    private static final LambdaSerialization<APIGatewayV2HTTPEvent> HTTP = LambdaSerialization.of(APIGatewayV2HTTPEvent.class);
    private static final LambdaSerialization<SQSEvent> SQS = LambdaSerialization.of(SQSEvent.class);

    @Test
    void aBase64BodyIsDecodedAndAPlainOneTakenAsUtf8() {
        byte[] binary = {0, (byte) 0xff, 0x10, 'a'};
        var encoded = APIGatewayV2HTTPEvent.builder().withRawPath("/x").withIsBase64Encoded(true)
                .withBody(Base64.getEncoder().encodeToString(binary)).build();
        assertArrayEquals(binary, ApiGatewayToCore.request(encoded).body());
        var plain = APIGatewayV2HTTPEvent.builder().withRawPath("/x").withIsBase64Encoded(false).withBody("ü").build();
        assertArrayEquals("ü".getBytes(StandardCharsets.UTF_8), ApiGatewayToCore.request(plain).body());
    }

    @Test
    void aBodyThatIsNotTheBase64ItClaimsIsABadRequest() {
        var event = APIGatewayV2HTTPEvent.builder().withRawPath("/x").withIsBase64Encoded(true).withBody("not base64!").build();
        assertEquals(400, ApiGatewayToCore.handle(event, request -> new ApiResponse(200, Map.of(), "{}")).getStatusCode());
    }

    @Test
    void anHttpEventWithoutItsPartsIsARequestWithoutThem() {
        ApiRequest request = ApiGatewayToCore.request(http("{\"routeKey\":\"DELETE /runs/{runId}\",\"headers\":{\"A\":null,\"B\":\"b\"},"
                + "\"pathParameters\":null,\"requestContext\":{\"http\":null,\"authorizer\":{\"iam\":{\"userArn\":\" \"}}},\"body\":null}"));
        assertEquals("DELETE", request.method(), "the route's method when the context has none");
        assertEquals(Map.of("b", "b"), request.headers(), "names lower-cased, null values left out");
        assertEquals(Map.of(), request.pathParameters());
        assertEquals(0, request.body().length);
        assertNull(request.principal(), "a blank ARN is no principal");
        assertEquals("GET", ApiGatewayToCore.request(null).method());
    }

    @Test
    void anSqsEventWithMissingOrNullPartsKeepsWhatItHas() {
        assertEquals(List.of(), SqsEvents.messages(null));
        assertEquals(List.of(), SqsEvents.messages(sqs("{\"Records\":null}")));
        List<QueueMessage> messages = SqsEvents.messages(sqs("{\"Records\":[null,{\"messageId\":\"m-1\",\"body\":\"{}\","
                + "\"attributes\":{\"ApproximateReceiveCount\":\"three\",\"SenderId\":null},"
                + "\"messageAttributes\":{\"a\":null,\"b\":{\"stringValue\":null,\"dataType\":\"Binary\"},\"c\":{\"stringValue\":\"x\"}},"
                + "\"eventSourceARN\":\"arn:aws:sqs:us-east-1:123456789012:runner-items-manual\"},{}]}"));
        assertEquals(2, messages.size(), "the null record is skipped, the empty one kept");
        QueueMessage first = messages.getFirst();
        assertEquals("m-1", first.messageId());
        assertEquals(1, first.receiveCount(), "an unreadable count is a first delivery");
        assertEquals(Map.of("c", "x"), first.attributes());
        assertEquals(Map.of("ApproximateReceiveCount", "three"), first.systemAttributes());
        assertEquals("runner-items-manual", first.sourceQueue());
        assertNull(messages.get(1).messageId());
    }

    private static APIGatewayV2HTTPEvent http(String json) {
        return HTTP.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)));
    }

    private static SQSEvent sqs(String json) {
        return SQS.read(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8)));
    }
}
