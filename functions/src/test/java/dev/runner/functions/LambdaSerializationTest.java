package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The functions read Lambda's events and write their answers as the runtime client's own
 * serializer does ({@link RuntimeClientSerializer}): every sample event, read both ways, is the same
 * value; every answer, written by the functions, reads back the same through the client. And the
 * SnapStart hooks can prime each type with a canned value. No I/O but the samples.
 */
class LambdaSerializationTest {

    /** Each events/ sample and the type its function takes it as. */
    private static final Map<String, Class<?>> SAMPLES = samples();

    private static Map<String, Class<?>> samples() {
        Map<String, Class<?>> samples = new LinkedHashMap<>();
        for (String api : List.of("api-create-run.json", "api-get-run.json", "api-iam-session.json", "webhook.json")) {
            samples.put(api, APIGatewayV2HTTPEvent.class);
        }
        for (String sqs : List.of("sqs-dlq.json", "sqs-ingest.json", "sqs-item-job.json", "sqs-run-job.json")) {
            samples.put(sqs, SQSEvent.class);
        }
        samples.put("scheduled.json", ScheduledEvent.class);
        samples.put("migrate.json", CloudFormationCustomResourceEvent.class);
        return samples;
    }

    @Test
    void everySampleEventReadsAsTheRuntimeClientReadsIt() throws IOException {
        for (var sample : SAMPLES.entrySet()) {
            byte[] json = Files.readAllBytes(Path.of("..", "events", sample.getKey()));
            Object ours = LambdaSerialization.of(sample.getValue()).read(new ByteArrayInputStream(json));
            assertEquals(RuntimeClientSerializer.read(json, sample.getValue()), ours, sample.getKey());
        }
        for (Class<?> type : List.of(SQSEvent.class, APIGatewayV2HTTPEvent.class, ScheduledEvent.class, CloudFormationCustomResourceEvent.class)) {
            byte[] json = canned(type);
            assertEquals(RuntimeClientSerializer.read(json, type), LambdaSerialization.of(type).read(new ByteArrayInputStream(json)),
                    "canned " + type.getSimpleName());
        }
    }

    @Test
    void theSamplesHoldWhatTheRenamedFieldsCarry() {
        SQSEvent sqs = Events.load("sqs-item-job.json", SQSEvent.class);
        assertEquals("arn:aws:sqs:us-east-1:123456789012:runner-items-manual", sqs.getRecords().getFirst().getEventSourceArn(),
                "Records and eventSourceARN, Lambda's spellings");
        assertEquals("Scheduled Event", Events.load("scheduled.json", ScheduledEvent.class).getDetailType());
        assertNotNull(Events.load("scheduled.json", ScheduledEvent.class).getTime());
        CloudFormationCustomResourceEvent resource = Events.load("migrate.json", CloudFormationCustomResourceEvent.class);
        assertNotNull(resource.getResponseUrl(), "ResponseURL");
        assertNotNull(resource.getRequestType(), "RequestType");
    }

    @Test
    void everyAnswerWrittenReadsBackTheSameThroughTheRuntimeClient() {
        var failures = new SQSBatchResponse(List.of(new SQSBatchResponse.BatchItemFailure("m-1"), new SQSBatchResponse.BatchItemFailure("m-2")));
        assertEquals(failures, RuntimeClientSerializer.read(LambdaSerialization.of(SQSBatchResponse.class).write(failures), SQSBatchResponse.class));
        var http = APIGatewayV2HTTPResponse.builder().withStatusCode(202).withHeaders(Map.of("content-type", "application/json"))
                .withBody("{\"runId\":\"r\"}").withIsBase64Encoded(false).build();
        assertEquals(http, RuntimeClientSerializer.read(LambdaSerialization.of(APIGatewayV2HTTPResponse.class).write(http),
                APIGatewayV2HTTPResponse.class));
        assertEquals("fired=1", RuntimeClientSerializer.read(LambdaSerialization.of(String.class).write("fired=1"), String.class));
        Map<String, String> status = Map.of("Status", "SUCCESS", "PhysicalResourceId", "runner-schema");
        assertEquals(status, RuntimeClientSerializer.read(LambdaSerialization.of(Map.class).write(status), Map.class));
    }

    @Test
    void everyEventAndAnswerTypeHasACannedValueItReadsAndWrites() {
        for (Class<?> type : List.of(SQSEvent.class, SQSBatchResponse.class, APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class,
                ScheduledEvent.class, String.class, CloudFormationCustomResourceEvent.class, Map.class)) {
            assertDoesNotThrow(() -> LambdaSerialization.of(type).prime(), type.getSimpleName());
        }
    }

    private static byte[] canned(Class<?> type) {
        try (InputStream json = LambdaSerialization.class.getResourceAsStream("events/" + type.getSimpleName() + ".json")) {
            assertNotNull(json, type.getSimpleName());
            return json.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
