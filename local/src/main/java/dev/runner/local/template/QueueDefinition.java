package dev.runner.local.template;

import java.util.Map;
import java.util.Optional;

/**
 * An {@code AWS::SQS::Queue} as declared.
 *
 * @param attributes CreateQueue attributes (VisibilityTimeout, RedrivePolicy as JSON, …)
 * @param deadLetterQueueName the queue its RedrivePolicy points at, if any: it must exist first
 */
public record QueueDefinition(String logicalId, String name, String arn, Map<String, String> attributes,
                              Optional<String> deadLetterQueueName) {
    public QueueDefinition {
        attributes = Map.copyOf(attributes);
    }
}
