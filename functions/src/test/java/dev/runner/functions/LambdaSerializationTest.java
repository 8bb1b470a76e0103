package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;

/** The SnapStart hooks prime each function's serializers with a canned value: every type the functions take or answer has one. */
class LambdaSerializationTest {

    @Test
    void everyEventAndAnswerTypeHasACannedValueItReadsAndWrites() {
        for (Class<?> type : List.of(SQSEvent.class, SQSBatchResponse.class, APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class,
                ScheduledEvent.class, String.class, CloudFormationCustomResourceEvent.class, Map.class)) {
            assertDoesNotThrow(() -> LambdaSerialization.of(type).prime(), type.getSimpleName());
        }
    }
}
