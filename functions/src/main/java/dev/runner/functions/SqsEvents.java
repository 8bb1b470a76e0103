package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.queue.QueueMessage;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** SQS events into the core's messages, and failed message ids into a partial batch response. */
final class SqsEvents {

    private SqsEvents() {}

    static List<QueueMessage> messages(SQSEvent event) {
        if (event == null || event.getRecords() == null) {
            return List.of();
        }
        return event.getRecords().stream().map(SqsEvents::message).toList();
    }

    private static QueueMessage message(SQSEvent.SQSMessage record) {
        Map<String, String> attributes = new HashMap<>();
        if (record.getAttributes() != null) {
            attributes.putAll(record.getAttributes());
        }
        if (record.getMessageAttributes() != null) {
            record.getMessageAttributes().forEach((name, value) -> {
                if (value != null && value.getStringValue() != null) {
                    attributes.put(name, value.getStringValue());
                }
            });
        }
        int receiveCount = 1;
        try {
            receiveCount = Integer.parseInt(attributes.getOrDefault("ApproximateReceiveCount", "1"));
        } catch (NumberFormatException ignored) {
            // an attribute SQS always sets; a hand-made event may not
        }
        return new QueueMessage(record.getMessageId(), record.getBody(), record.getReceiptHandle(), receiveCount,
                QueueMessage.queueNameOfArn(record.getEventSourceArn()), attributes);
    }

    /** Lambda deletes every message not listed here (ReportBatchItemFailures). */
    static SQSBatchResponse response(List<String> failedMessageIds) {
        return SQSBatchResponse.builder()
                .withBatchItemFailures(failedMessageIds.stream()
                        .map(id -> SQSBatchResponse.BatchItemFailure.builder().withItemIdentifier(id).build())
                        .toList())
                .build();
    }
}
