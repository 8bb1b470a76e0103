package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Invokes a function as Lambda does: the event, built with the event library, written as JSON by
 * the runtime client's own serializer, handed to the stream handler, and its answer read back
 * with that serializer into what the event source reads (a partial batch response, an HTTP answer).
 */
final class Lambda {

    private Lambda() {}

    /**
     * One SQS record as the event source mapping delivers it.
     *
     * @param system     the message's system attributes (ApproximateReceiveCount…)
     * @param attributes its message attributes, all strings
     */
    static SQSEvent.SQSMessage sqsRecord(String messageId, String receiptHandle, String body, String queueArn,
                                         Map<String, String> system, Map<String, String> attributes) {
        var record = new SQSEvent.SQSMessage();
        record.setMessageId(messageId);
        record.setReceiptHandle(receiptHandle);
        record.setBody(body);
        record.setEventSource("aws:sqs");
        record.setEventSourceArn(queueArn);
        record.setAwsRegion("us-east-1");
        record.setAttributes(new LinkedHashMap<>(system));
        Map<String, SQSEvent.MessageAttribute> messageAttributes = new LinkedHashMap<>();
        attributes.forEach((name, value) -> {
            var attribute = new SQSEvent.MessageAttribute();
            attribute.setDataType("String");
            attribute.setStringValue(value);
            messageAttributes.put(name, attribute);
        });
        record.setMessageAttributes(messageAttributes);
        return record;
    }

    static SQSEvent sqsEvent(List<SQSEvent.SQSMessage> records) {
        var event = new SQSEvent();
        event.setRecords(records);
        return event;
    }

    static SQSBatchResponse sqs(RequestStreamHandler function, SQSEvent event, Context context) {
        return invoke(function, event, context, SQSBatchResponse.class);
    }

    static APIGatewayV2HTTPResponse http(RequestStreamHandler function, APIGatewayV2HTTPEvent event, Context context) {
        return invoke(function, event, context, APIGatewayV2HTTPResponse.class);
    }

    /** A function answering a JSON string (the scheduler). */
    static String text(RequestStreamHandler function, Object event, Context context) {
        return invoke(function, event, context, String.class);
    }

    /** A function taking and answering JSON objects (the custom resource). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> map(RequestStreamHandler function, Map<String, Object> event, Context context) {
        return invoke(function, event, context, Map.class);
    }

    static <R> R invoke(RequestStreamHandler function, Object event, Context context, Class<R> answerType) {
        var out = new ByteArrayOutputStream();
        try {
            function.handleRequest(new ByteArrayInputStream(RuntimeClientSerializer.write(event)), out, context);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return RuntimeClientSerializer.read(out.toByteArray(), answerType);
    }

    /** The ids a partial batch response lists as failed. */
    static Set<String> failedIds(SQSBatchResponse response) {
        if (response == null || response.getBatchItemFailures() == null) {
            return Set.of();
        }
        return response.getBatchItemFailures().stream().map(SQSBatchResponse.BatchItemFailure::getItemIdentifier)
                .collect(Collectors.toSet());
    }
}
