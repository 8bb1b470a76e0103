package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.queue.QueueMessage;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** SQS events into the core's messages, and failed message ids into a partial batch response. */
public final class SqsEvents {

    private SqsEvents() {}

    static List<QueueMessage> messages(SQSEvent event) {
        if (event == null || event.getRecords() == null) {
            return List.of();
        }
        return event.getRecords().stream().filter(java.util.Objects::nonNull).map(SqsEvents::message).toList();
    }

    private static QueueMessage message(SQSEvent.SQSMessage record) {
        Map<String, String> system = new HashMap<>();
        if (record.getAttributes() != null) {
            record.getAttributes().forEach((name, value) -> {
                if (name != null && value != null) {
                    system.put(name, value);
                }
            });
        }
        Map<String, String> attributes = new HashMap<>();
        if (record.getMessageAttributes() != null) {
            record.getMessageAttributes().forEach((name, value) -> {
                if (name != null && value != null && value.getStringValue() != null) {
                    attributes.put(name, value.getStringValue());
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

    /**
     * Messages received with the SDK as the event Lambda's event source mapping would deliver them:
     * for the local runtime and tests, which play the part of the mapping.
     */
    public static SQSEvent fromReceived(List<software.amazon.awssdk.services.sqs.model.Message> received, String queueArn, String region) {
        List<SQSEvent.SQSMessage> records = new java.util.ArrayList<>(received.size());
        for (var message : received) {
            var record = new SQSEvent.SQSMessage();
            record.setMessageId(message.messageId());
            record.setReceiptHandle(message.receiptHandle());
            record.setBody(message.body());
            record.setMd5OfBody(message.md5OfBody());
            record.setMd5OfMessageAttributes(message.md5OfMessageAttributes());
            record.setEventSource("aws:sqs");
            record.setEventSourceArn(queueArn);
            record.setAwsRegion(region);
            record.setAttributes(new java.util.LinkedHashMap<>(message.attributesAsStrings()));
            Map<String, SQSEvent.MessageAttribute> attributes = new java.util.LinkedHashMap<>();
            message.messageAttributes().forEach((name, value) -> attributes.put(name, attribute(value)));
            record.setMessageAttributes(attributes);
            records.add(record);
        }
        var event = new SQSEvent();
        event.setRecords(records);
        return event;
    }

    private static SQSEvent.MessageAttribute attribute(software.amazon.awssdk.services.sqs.model.MessageAttributeValue value) {
        var attribute = new SQSEvent.MessageAttribute();
        attribute.setDataType(value.dataType());
        attribute.setStringValue(value.stringValue());
        if (value.binaryValue() != null) {
            attribute.setBinaryValue(value.binaryValue().asByteBuffer());
        }
        if (value.hasStringListValues() && !value.stringListValues().isEmpty()) {
            attribute.setStringListValues(value.stringListValues());
        }
        if (value.hasBinaryListValues() && !value.binaryListValues().isEmpty()) {
            attribute.setBinaryListValues(value.binaryListValues().stream().map(b -> b.asByteBuffer()).toList());
        }
        return attribute;
    }

    /** The ids a partial batch response lists as failed. */
    public static java.util.Set<String> failedIds(SQSBatchResponse response) {
        if (response == null || response.getBatchItemFailures() == null) {
            return java.util.Set.of();
        }
        return response.getBatchItemFailures().stream().map(SQSBatchResponse.BatchItemFailure::getItemIdentifier)
                .collect(java.util.stream.Collectors.toSet());
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
