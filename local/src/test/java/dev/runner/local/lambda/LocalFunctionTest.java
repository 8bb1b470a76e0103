package dev.runner.local.lambda;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.local.template.FunctionDefinition;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A stream handler is invoked as Lambda invokes it: the event as Lambda's JSON in, its JSON answer read back for the source. */
class LocalFunctionTest {

    /** Reports each record whose body is "fail", by the fields Lambda's SQS event names them with. */
    public static final class FailingRecords implements RequestStreamHandler {
        public FailingRecords(Map<String, String> environment) {}

        @Override
        public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
            JsonNode event = Json.parse(input.readAllBytes());
            var answer = Json.object();
            var failures = answer.putArray("batchItemFailures");
            for (JsonNode record : event.path("Records")) {
                if (!record.path("eventSourceARN").asText().endsWith(":runner-items-manual")) {
                    throw new IllegalStateException("no eventSourceARN in " + record);
                }
                if (record.path("body").asText().equals("fail")) {
                    failures.addObject().put("itemIdentifier", record.path("messageId").asText());
                }
            }
            output.write(Json.writeBytes(answer));
        }
    }

    /** Answers whatever its event's body says, as raw bytes. */
    public static final class Parrot implements RequestStreamHandler {
        public Parrot(Map<String, String> environment) {}

        @Override
        public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
            output.write(Json.parse(input.readAllBytes()).path("body").asText().getBytes(StandardCharsets.UTF_8));
        }
    }

    public static final class TakesSqs implements RequestHandler<SQSEvent, SQSBatchResponse> {
        public TakesSqs(Map<String, String> environment) {}

        @Override
        public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
            return new SQSBatchResponse(List.of());
        }
    }

    public static final class NoHandler {
        public NoHandler(Map<String, String> environment) {}
    }

    @Test
    void aStreamHandlerReadsTheEventAsLambdaSendsItAndItsAnswerIsReadBack() {
        try (var function = load(FailingRecords.class)) {
            var outcome = function.invoke(sqs(record("m-1", "ok"), record("m-2", "fail")), SQSBatchResponse.class);

            var answer = assertInstanceOf(SQSBatchResponse.class, assertInstanceOf(LocalFunction.Outcome.Returned.class, outcome).value());
            assertEquals(List.of("m-2"), answer.getBatchItemFailures().stream().map(SQSBatchResponse.BatchItemFailure::getItemIdentifier).toList());
        }
    }

    @Test
    void anAnswerThatIsNotTheJsonTheSourceReadsFailsTheInvocation() {
        try (var function = load(Parrot.class)) {
            var outcome = function.invoke(http("{not json"), SQSBatchResponse.class);

            assertEquals("Runtime.InvalidAnswer", assertInstanceOf(LocalFunction.Outcome.Failed.class, outcome).errorType());
        }
    }

    @Test
    void anEmptyAnswerIsNoAnswer() {
        try (var function = load(Parrot.class)) {
            assertNull(assertInstanceOf(LocalFunction.Outcome.Returned.class, function.invoke(http(""), Object.class)).value());
            assertEquals(Map.of("any", "json"), assertInstanceOf(LocalFunction.Outcome.Returned.class,
                    function.invoke(http("{\"any\":\"json\"}"), Object.class)).value(), "Object: whatever JSON it is");
        }
    }

    @Test
    void aTypedHandlerMustTakeWhatItsSourceDeliversAndAStreamHandlerTakesAnyEvent() {
        try (var typed = load(TakesSqs.class); var stream = load(FailingRecords.class)) {
            typed.requireInput(SQSEvent.class, "Items");
            var refused = assertThrows(LocalFunction.FunctionLoadException.class, () -> typed.requireInput(APIGatewayV2HTTPEvent.class, "Api"));
            assertTrue(refused.getMessage().contains("Api delivers APIGatewayV2HTTPEvent"), refused.getMessage());
            stream.requireInput(APIGatewayV2HTTPEvent.class, "Api");
            stream.requireInput(SQSEvent.class, "Items");
        }
    }

    @Test
    void aClassThatIsNoHandlerDoesNotLoad() {
        var refused = assertThrows(LocalFunction.FunctionLoadException.class, () -> load(NoHandler.class));
        assertTrue(refused.getMessage().contains("implements neither"), refused.getMessage());
    }

    private static LocalFunction load(Class<?> handler) {
        var definition = new FunctionDefinition(handler.getSimpleName(), "runner-test", handler.getName() + "::handleRequest",
                Duration.ofSeconds(30), 512, Map.of(), List.of(), Optional.empty());
        return LocalFunction.load(definition, "arn:aws:lambda:us-east-1:000000000000:function:runner-test", Map.of(), Clock.systemUTC());
    }

    private static SQSEvent sqs(SQSEvent.SQSMessage... records) {
        var event = new SQSEvent();
        event.setRecords(List.of(records));
        return event;
    }

    private static SQSEvent.SQSMessage record(String id, String body) {
        var record = new SQSEvent.SQSMessage();
        record.setMessageId(id);
        record.setBody(body);
        record.setEventSourceArn("arn:aws:sqs:us-east-1:000000000000:runner-items-manual");
        return record;
    }

    private static APIGatewayV2HTTPEvent http(String body) {
        return APIGatewayV2HTTPEvent.builder().withRawPath("/").withBody(body).build();
    }
}
