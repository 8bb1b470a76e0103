package dev.runner.local.iam;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.embedded.sqs.ElasticMqQueues;
import dev.runner.embedded.sqs.SqsFrontEnd;

/**
 * The local runtime's IAM check of SQS requests, at its SQS endpoint as in AWS: a request signed
 * with a function's key that its role does not allow is refused with SQS's AccessDenied before
 * it reaches a queue. Per request a map lookup and a few string matches. Requests signed with any
 * other key (operators, the AWS CLI) pass untouched.
 */
public final class SqsIamInspector implements SqsFrontEnd.Inspector {

    private final LocalIam iam;

    public SqsIamInspector(LocalIam iam) {
        this.iam = iam;
    }

    @Override
    public String inspect(SqsFrontEnd.Request request) {
        if (iam.identity(request.accessKeyId()).isEmpty()) {
            return null;
        }
        if (request.operation() == null || request.body() == null || !request.body().isObject()) {
            // A function speaks the JSON protocol only: anything else signed with its key (the query protocol's
            // Action=…, a GET) would pass ElasticMQ unchecked, so it is refused here.
            return "User: " + request.accessKeyId() + " may call this SQS endpoint only with the JSON protocol"
                    + " (X-Amz-Target: AmazonSQS.<Action>, a JSON body)";
        }
        String operation = request.operation();
        String action = "sqs:" + (operation.endsWith("Batch") ? operation.substring(0, operation.length() - "Batch".length()) : operation);
        return iam.denial(request.accessKeyId(), action, resource(request.body()));
    }

    /** The queue's ARN, from its URL (or name); the account's queues for requests that name none (ListQueues). */
    private String resource(JsonNode body) {
        String name = "*";
        if (body != null && body.path("QueueUrl").isTextual()) {
            name = ElasticMqQueues.queueName(body.get("QueueUrl").asText());
        } else if (body != null && body.path("QueueName").isTextual()) {
            name = body.get("QueueName").asText();
        }
        return "arn:aws:sqs:" + iam.stack().region() + ":" + iam.stack().accountId() + ":" + name;
    }
}
