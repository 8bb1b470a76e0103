package dev.runner.queue;

import java.util.Map;

/**
 * A message as a consumer received it: the core's view of an SQS record, free of Lambda types.
 *
 * @param receiveCount     SQS's ApproximateReceiveCount (1 on first delivery)
 * @param sourceQueue      the queue's name (last segment of the event source ARN)
 * @param attributes       the string message attributes its producer set: anything a producer may write
 * @param systemAttributes what SQS itself set ({@code SenderId}, {@code SentTimestamp}, …): kept apart, so that no
 *                         producer can pass off a message attribute as one of these
 */
public record QueueMessage(String messageId, String body, String receiptHandle, int receiveCount,
                           String sourceQueue, Map<String, String> attributes, Map<String, String> systemAttributes) {

    public QueueMessage {
        attributes = attributes == null ? Map.of() : attributes;
        systemAttributes = systemAttributes == null ? Map.of() : systemAttributes;
    }

    /** A message without system attributes: hand-made, or from a consumer that reads none. */
    public QueueMessage(String messageId, String body, String receiptHandle, int receiveCount, String sourceQueue,
                        Map<String, String> attributes) {
        this(messageId, body, receiptHandle, receiveCount, sourceQueue, attributes, Map.of());
    }

    public static String queueNameOfArn(String arn) {
        if (arn == null) {
            return null;
        }
        int colon = arn.lastIndexOf(':');
        return colon < 0 ? arn : arn.substring(colon + 1);
    }
}
