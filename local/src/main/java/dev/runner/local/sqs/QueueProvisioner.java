package dev.runner.local.sqs;

import dev.runner.local.template.QueueDefinition;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Creates the template's queues on the local SQS server, dead-letter queues first. */
public final class QueueProvisioner {

    private final SqsClient sqs;

    public QueueProvisioner(SqsClient sqs) {
        this.sqs = sqs;
    }

    /** @return queue URL by logical id */
    public Map<String, String> create(List<QueueDefinition> queues) {
        Map<String, String> urls = new LinkedHashMap<>();
        for (QueueDefinition queue : queues) {
            Map<QueueAttributeName, String> attributes = new LinkedHashMap<>();
            queue.attributes().forEach((name, value) -> attributes.put(QueueAttributeName.fromValue(name), value));
            String url = sqs.createQueue(b -> b.queueName(queue.name()).attributes(attributes)).queueUrl();
            urls.put(queue.logicalId(), url);
        }
        return urls;
    }
}
