package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.queue.QueueMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Lambda's SQS event into the core's messages, and failed message ids into the partial batch response. */
final class SqsEvents {

    private SqsEvents() {}

    /** The batch's messages; a null event or record list is an empty batch. */
    static List<QueueMessage> messages(SQSEvent event) {
        if (event == null || event.getRecords() == null) {
            return List.of();
        }
        List<QueueMessage> messages = new ArrayList<>(event.getRecords().size());
        for (SQSEvent.SQSMessage record : event.getRecords()) {
            if (record != null) {
                messages.add(message(record));
            }
        }
        return messages;
    }

    private static QueueMessage message(SQSEvent.SQSMessage record) {
        Map<String, String> system = LambdaSerialization.withoutNulls(record.getAttributes());
        Map<String, String> attributes = new HashMap<>();
        if (record.getMessageAttributes() != null) {
            record.getMessageAttributes().forEach((name, attribute) -> {
                if (attribute != null && attribute.getStringValue() != null) {
                    attributes.put(name, attribute.getStringValue());
                }
            });
        }
        int receiveCount = 1;
        try {
            receiveCount = Integer.parseInt(system.getOrDefault("ApproximateReceiveCount", "1"));
        } catch (NumberFormatException ignored) {
            // an attribute SQS always sets; a hand-made event may not
        }
        return new QueueMessage(record.getMessageId(), record.getBody(), record.getReceiptHandle(), receiveCount,
                QueueMessage.queueNameOfArn(record.getEventSourceArn()), attributes, system);
    }

    /** Lambda deletes every message not listed here (ReportBatchItemFailures). */
    static SQSBatchResponse response(List<String> failedMessageIds) {
        return new SQSBatchResponse(failedMessageIds.stream().map(SQSBatchResponse.BatchItemFailure::new).toList());
    }
}
