package dev.runner.queue;

import java.util.Map;

/**
 * A message as a consumer received it: the core's view of an SQS record, free of Lambda types.
 *
 * @param receiveCount SQS's ApproximateReceiveCount (1 on first delivery)
 * @param sourceQueue  the queue's name (last segment of the event source ARN)
 */
public record QueueMessage(String messageId, String body, String receiptHandle, int receiveCount,
                           String sourceQueue, Map<String, String> attributes) {

    public static String queueNameOfArn(String arn) {
        if (arn == null) {
            return null;
        }
        int colon = arn.lastIndexOf(':');
        return colon < 0 ? arn : arn.substring(colon + 1);
    }
}
