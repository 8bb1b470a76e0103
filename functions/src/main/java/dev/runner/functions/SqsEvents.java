package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.queue.QueueMessage;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Lambda's SQS event (its JSON, as the event source mapping sends it) into the core's messages,
 * and failed message ids into the partial batch response {@code {"batchItemFailures":[{"itemIdentifier":…}]}}.
 */
final class SqsEvents {

    private SqsEvents() {}

    static List<QueueMessage> messages(JsonNode event) {
        JsonNode records = event.path("Records");
        if (!records.isArray()) {
            return List.of();
        }
        List<QueueMessage> messages = new ArrayList<>(records.size());
        for (JsonNode record : records) {
            if (record.isObject()) {
                messages.add(message(record));
            }
        }
        return messages;
    }

    private static QueueMessage message(JsonNode record) {
        Map<String, String> system = LambdaJson.strings(record.get("attributes"));
        Map<String, String> attributes = new HashMap<>();
        record.path("messageAttributes").properties().forEach(attribute -> {
            String value = LambdaJson.text(attribute.getValue().get("stringValue"));
            if (value != null) {
                attributes.put(attribute.getKey(), value);
            }
        });
        int receiveCount = 1;
        try {
            receiveCount = Integer.parseInt(system.getOrDefault("ApproximateReceiveCount", "1"));
        } catch (NumberFormatException ignored) {
            // an attribute SQS always sets; a hand-made event may not
        }
        return new QueueMessage(LambdaJson.text(record.get("messageId")), LambdaJson.text(record.get("body")),
                LambdaJson.text(record.get("receiptHandle")), receiveCount,
                QueueMessage.queueNameOfArn(LambdaJson.text(record.get("eventSourceARN"))), attributes, system);
    }

    /** Lambda deletes every message not listed here (ReportBatchItemFailures). */
    static ObjectNode response(List<String> failedMessageIds) {
        ObjectNode response = Json.object();
        ArrayNode failures = response.putArray("batchItemFailures");
        for (String id : failedMessageIds) {
            failures.addObject().put("itemIdentifier", id);
        }
        return response;
    }
}
