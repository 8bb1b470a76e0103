package dev.runner.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.local.template.CloudFormationYaml;
import dev.runner.local.testfunctions.Recorder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A function the template gains later is wired without code changes: a copy of the project's
 * template with one more queue and one more function (an SQS event and an HTTP route) runs it.
 */
class TemplateWiringIT {

    @Test
    void aFunctionAddedToTheTemplateIsWiredWithoutCodeChanges(@TempDir Path directory) throws Exception {
        Path template = directory.resolve("template.yaml");
        Files.writeString(template, withAddedFunction(Files.readString(LocalRuntimeIT.projectTemplate())));

        try (var runtime = LocalRuntime.start(LocalOptions.defaults(template, Map.of()).withFreePorts().withDemo(false));
             var sqs = SqsClient.builder()
                     .endpointOverride(URI.create(runtime.endpoints().sqsEndpoint()))
                     .region(Region.US_EAST_1)
                     .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x")))
                     .httpClient(UrlConnectionHttpClient.create())
                     .build()) {
            String body = "audit-" + UUID.randomUUID();
            String queueUrl = sqs.getQueueUrl(b -> b.queueName("runner-audit")).queueUrl();
            sqs.sendMessage(b -> b.queueUrl(queueUrl).messageBody(body));

            await().atMost(Duration.ofSeconds(30)).until(() -> Recorder.of("runner-AuditFunction").stream()
                    .flatMap(i -> ((SQSEvent) i.event()).getRecords().stream())
                    .anyMatch(m -> m.getBody().equals(body)));
            Recorder.Invocation invocation = Recorder.of("runner-AuditFunction").getFirst();
            assertEquals(runtime.queueUrls().get("ItemsWebhookQueue"), invocation.environment().get("RUNNER_QUEUE_ITEMS_WEBHOOK"),
                    "the added function gets the Globals environment like the others");
            assertEquals("audit-value", invocation.environment().get("AUDIT_SETTING"));

            HttpResponse<String> echoed = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(runtime.apiUrl().resolve("/audit/a-1")).POST(HttpRequest.BodyPublishers.ofString("hi")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(201, echoed.statusCode());
            var event = (APIGatewayV2HTTPEvent) Recorder.of("runner-AuditHttpFunction").getLast().event();
            assertEquals(Map.of("auditId", "a-1"), event.getPathParameters());
        }
    }

    /** The template plus an audit queue with its DLQ, an SQS-driven function and an HTTP-driven one. */
    private static String withAddedFunction(String original) {
        Map<String, Object> template = CloudFormationYaml.parse(original);
        @SuppressWarnings("unchecked")
        Map<String, Object> resources = (Map<String, Object>) template.get("Resources");
        resources.put("AuditDlq", Map.of("Type", "AWS::SQS::Queue",
                "Properties", Map.of("QueueName", Map.of("Fn::Sub", "${AWS::StackName}-audit-dlq"))));
        resources.put("AuditQueue", Map.of("Type", "AWS::SQS::Queue", "Properties", Map.of(
                "QueueName", Map.of("Fn::Sub", "${AWS::StackName}-audit"),
                "VisibilityTimeout", 30,
                "RedrivePolicy", Map.of("deadLetterTargetArn", Map.of("Fn::GetAtt", List.of("AuditDlq", "Arn")), "maxReceiveCount", 5))));
        resources.put("AuditFunction", Map.of("Type", "AWS::Serverless::Function", "Properties", Map.of(
                "Handler", "dev.runner.local.testfunctions.RecordingQueueFunction::handleRequest",
                "Environment", Map.of("Variables", Map.of("AUDIT_SETTING", "audit-value")),
                "Events", Map.of("Audit", Map.of("Type", "SQS", "Properties", Map.of(
                        "Queue", Map.of("Fn::GetAtt", List.of("AuditQueue", "Arn")),
                        "BatchSize", 5,
                        "FunctionResponseTypes", List.of("ReportBatchItemFailures"),
                        "ScalingConfig", Map.of("MaximumConcurrency", 2)))))));
        resources.put("AuditHttpFunction", Map.of("Type", "AWS::Serverless::Function", "Properties", Map.of(
                "Handler", "dev.runner.local.testfunctions.EchoHttpFunction::handleRequest",
                "Events", Map.of("Audit", Map.of("Type", "HttpApi", "Properties", Map.of(
                        "ApiId", Map.of("Ref", "HttpApi"), "Method", "POST", "Path", "/audit/{auditId}"))))));
        var options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        return new Yaml(options).dump(new LinkedHashMap<>(template));
    }
}
