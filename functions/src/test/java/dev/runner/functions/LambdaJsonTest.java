package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.serialization.PojoSerializer;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.queue.QueueMessage;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The functions read Lambda's JSON and write their answers themselves: the answers are byte for byte
 * what the runtime client's serializer wrote for the event library's classes, and events with
 * missing or null parts read as leniently as that serializer read them.
 */
class LambdaJsonTest {

    @Test
    void aBatchResponseIsWhatTheRuntimeClientWrote() {
        for (List<String> failed : List.of(List.<String>of(), List.of("m-1", "m-2"))) {
            var typed = SQSBatchResponse.builder().withBatchItemFailures(failed.stream()
                    .map(id -> SQSBatchResponse.BatchItemFailure.builder().withItemIdentifier(id).build()).toList()).build();
            assertEquals(runtimeClient(SQSBatchResponse.class, typed), Json.write(SqsEvents.response(failed)));
        }
    }

    @Test
    void anHttpAnswerIsWhatTheRuntimeClientWrote() {
        List<ApiResponse> answers = List.of(ApiResponse.error(404, "not_found", "no \"such\" run"),
                ApiResponse.json(202, Json.object().put("runId", "r-1")).withHeader("Location", "/runs/r-1"),
                new ApiResponse(204, Map.of(), null));
        for (ApiResponse answer : answers) {
            var typed = APIGatewayV2HTTPResponse.builder().withStatusCode(answer.status()).withHeaders(answer.headers())
                    .withBody(answer.body()).withIsBase64Encoded(false).build();
            assertEquals(runtimeClient(APIGatewayV2HTTPResponse.class, typed), Json.write(ApiGatewayToCore.response(answer)));
        }
    }

    @Test
    void aBase64BodyIsDecodedAndAPlainOneTakenAsUtf8() {
        byte[] binary = {0, (byte) 0xff, 0x10, 'a'};
        JsonNode encoded = Json.object().put("rawPath", "/x").put("isBase64Encoded", true)
                .put("body", java.util.Base64.getEncoder().encodeToString(binary));
        assertArrayEquals(binary, ApiGatewayToCore.request(encoded).body());
        JsonNode plain = Json.object().put("rawPath", "/x").put("isBase64Encoded", false).put("body", "ü");
        assertArrayEquals("ü".getBytes(StandardCharsets.UTF_8), ApiGatewayToCore.request(plain).body());
    }

    @Test
    void aBodyThatIsNotTheBase64ItClaimsIsABadRequest() {
        JsonNode event = Json.object().put("rawPath", "/x").put("isBase64Encoded", true).put("body", "not base64!");
        JsonNode answer = ApiGatewayToCore.handle(event, request -> new ApiResponse(200, Map.of(), "{}"));
        assertEquals(400, answer.path("statusCode").asInt());
    }

    @Test
    void anHttpEventWithoutItsPartsIsARequestWithoutThem() {
        ApiRequest request = ApiGatewayToCore.request(Json.parse("{\"routeKey\":\"DELETE /runs/{runId}\",\"headers\":{\"A\":null,\"B\":\"b\"},"
                + "\"pathParameters\":null,\"requestContext\":{\"http\":null,\"authorizer\":{\"iam\":{\"userArn\":\" \"}}},\"body\":null}"));
        assertEquals("DELETE", request.method(), "the route's method when the context has none");
        assertEquals(Map.of("b", "b"), request.headers(), "names lower-cased, null values left out");
        assertEquals(Map.of(), request.pathParameters());
        assertEquals(0, request.body().length);
        assertNull(request.principal(), "a blank ARN is no principal");
        assertEquals("GET", ApiGatewayToCore.request(NullNode.getInstance()).method());
    }

    @Test
    void anSqsEventWithMissingOrNullPartsKeepsWhatItHas() {
        assertEquals(List.of(), SqsEvents.messages(NullNode.getInstance()));
        assertEquals(List.of(), SqsEvents.messages(Json.parse("{\"Records\":null}")));
        assertEquals(List.of(), SqsEvents.messages(Json.parse("{\"Records\":{\"a\":{\"messageId\":\"m\"}}}")), "records are a list");
        List<QueueMessage> messages = SqsEvents.messages(Json.parse("{\"Records\":[null,{\"messageId\":\"m-1\",\"body\":\"{}\","
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

    private static <T> String runtimeClient(Class<T> type, T value) {
        PojoSerializer<T> serializer = LambdaEventSerializers.serializerFor(type, LambdaJsonTest.class.getClassLoader());
        var out = new ByteArrayOutputStream();
        serializer.toJson(value, out);
        return out.toString(StandardCharsets.UTF_8);
    }
}
