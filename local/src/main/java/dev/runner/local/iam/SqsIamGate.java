package dev.runner.local.iam;

import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The local runtime's IAM check of SQS requests, as an SDK interceptor registered for every client
 * in the JVM (resource software/amazon/awssdk/global/handlers/execution.interceptors): a request
 * to a local runtime's SQS endpoint, signed with a function's key, that its role does not allow
 * fails with SQS's AccessDenied before it is sent. In process and per request a map lookup and a
 * few string matches: no proxy hop in front of ElasticMQ. Requests to any other endpoint, and
 * those of operators, pass untouched.
 */
public final class SqsIamGate implements ExecutionInterceptor {

    /** The local IAM of each running runtime, by its SQS endpoint's host:port. */
    private static final Map<String, LocalIam> BY_ENDPOINT = new ConcurrentHashMap<>();

    /** Checks requests to {@code hostPort} against {@code iam} until {@link #unregister}. */
    public static void register(String hostPort, LocalIam iam) {
        BY_ENDPOINT.put(hostPort, iam);
    }

    public static void unregister(String hostPort) {
        BY_ENDPOINT.remove(hostPort);
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (BY_ENDPOINT.isEmpty() || !"Sqs".equals(attributes.getAttribute(SdkExecutionAttribute.SERVICE_NAME))) {
            return;
        }
        SdkHttpRequest http = context.httpRequest();
        LocalIam iam = BY_ENDPOINT.get(http.host() + ":" + http.port());
        if (iam == null) {
            return;
        }
        String accessKey = LocalIam.accessKeyId(http.firstMatchingHeader("Authorization").orElse(null));
        if (iam.identity(accessKey).isEmpty()) {
            return;
        }
        String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
        String action = "sqs:" + (operation.endsWith("Batch") ? operation.substring(0, operation.length() - "Batch".length()) : operation);
        String denial = iam.denial(accessKey, action, resource(iam, context));
        if (denial != null) {
            throw SqsException.builder()
                    .message(denial)
                    .statusCode(403)
                    .awsErrorDetails(AwsErrorDetails.builder().errorCode("AccessDenied").errorMessage(denial).serviceName("Sqs")
                            .sdkHttpResponse(SdkHttpResponse.builder().statusCode(403).build()).build())
                    .build();
        }
    }

    /** The queue's ARN, from its URL (or name); the account's queues for requests that name none (ListQueues). */
    private static String resource(LocalIam iam, Context.BeforeTransmission context) {
        Optional<String> url = context.request().getValueForField("QueueUrl", String.class);
        String name = url.map(u -> u.substring(u.lastIndexOf('/') + 1))
                .or(() -> context.request().getValueForField("QueueName", String.class))
                .orElse("*");
        return "arn:aws:sqs:" + iam.stack().region() + ":" + iam.stack().accountId() + ":" + name;
    }
}
