package dev.runner.local.template;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TemplateTest {

    private static final String ARN_PREFIX = "arn:aws:sqs:us-east-1:000000000000:";

    @Test
    void createsDeadLetterQueuesBeforeTheQueuesThatRedriveToThem() {
        List<QueueDefinition> queues = fixture(Map.of()).queues();

        assertEquals(List.of("runner-work-dlq", "runner-work"), queues.stream().map(QueueDefinition::name).toList());
        QueueDefinition work = queues.get(1);
        assertEquals(ARN_PREFIX + "runner-work", work.arn());
        assertEquals("5", work.attributes().get("VisibilityTimeout"));
        assertEquals("{\"deadLetterTargetArn\":\"" + ARN_PREFIX + "runner-work-dlq\",\"maxReceiveCount\":\"2\"}",
                work.attributes().get("RedrivePolicy"));
        assertEquals("1209600", queues.get(0).attributes().get("MessageRetentionPeriod"));
    }

    @Test
    void leavesOutResourcesWhoseConditionIsFalse() {
        assertFalse(fixture(Map.of()).queues().stream().anyMatch(q -> q.logicalId().equals("ProdOnlyQueue")));
        assertTrue(fixture(Map.of("Stage", "prod")).queues().stream().anyMatch(q -> q.logicalId().equals("ProdOnlyQueue")));
    }

    @Test
    void resolvesGlobalsAndFunctionEnvironmentWithShortFormTags() {
        Map<String, String> echo = function(fixture(Map.of()), "EchoFunction").environment();

        assertEquals("3", echo.get("RUNNER_MAX_ATTEMPTS"), "Ref to a parameter's Default");
        assertEquals("http://sqs.local/runner-work", echo.get("RUNNER_QUEUE_WORK"), "Ref to a queue is its URL");
        assertEquals("secret<secretsmanager:runner/api-key:SecretString:apiKey>", echo.get("RUNNER_API_KEY"));
        assertEquals("dev-us-east-1", echo.get("STAGE_LABEL"), "Fn::If on a condition, Sub with a pseudo parameter");
        assertEquals(ARN_PREFIX + "runner-work", echo.get("WORK_ARN"));
        assertEquals("runner-work", echo.get("WORK_NAME"), "Sub with ${Resource.Attribute}");
        assertEquals("b", echo.get("SECOND_ZONE"), "Select over a CommaDelimitedList");
        assertEquals("000000000000/literal/${NotAVariable}", echo.get("JOINED"), "Join, and ${!Literal} in Sub");
        assertFalse(echo.containsKey("DROPPED"), "AWS::NoValue removes the variable");
        assertEquals("yes-echo", echo.get("ONLY_ECHO"));
        assertFalse(function(fixture(Map.of()), "WorkFunction").environment().containsKey("ONLY_ECHO"));
    }

    @Test
    void parameterOverridesReplaceDefaults() {
        Map<String, String> environment = function(fixture(Map.of("Stage", "prod", "MaxAttempts", "7")), "EchoFunction").environment();

        assertEquals("production", environment.get("STAGE_LABEL"));
        assertEquals("7", environment.get("RUNNER_MAX_ATTEMPTS"));
        assertEquals("kept", environment.get("DROPPED"));
    }

    @Test
    void aFunctionTimeoutOverridesTheGlobalOne() {
        Template template = fixture(Map.of());
        assertEquals(Duration.ofSeconds(5), function(template, "EchoFunction").timeout());
        assertEquals(Duration.ofSeconds(30), function(template, "WorkFunction").timeout());
        assertEquals(512, function(template, "WorkFunction").memoryMb());
        assertEquals("runner-WorkFunction", function(template, "WorkFunction").name());
    }

    @Test
    void readsEveryEventKind() {
        Template template = fixture(Map.of());

        assertEquals(List.of(new EventSource.HttpRoute("EchoFunction.Events.Things", "POST", "/things/{thingId}"),
                        new EventSource.HttpRoute("EchoFunction.Events.Files", "ANY", "/files/{proxy+}")),
                function(template, "EchoFunction").events());
        assertEquals(List.of(new EventSource.Queue("WorkFunction.Events.Work", ARN_PREFIX + "runner-work", 5,
                        Duration.ofSeconds(1), 2, true)),
                function(template, "WorkFunction").events());
        assertEquals(List.of(new EventSource.Queue("DlqMapping", ARN_PREFIX + "runner-work-dlq", 1, Duration.ZERO,
                        Template.DEFAULT_MAXIMUM_CONCURRENCY, false)),
                function(template, "DlqFunction").events(), "a standalone EventSourceMapping");
        assertEquals(List.of(new EventSource.Schedule("TickFunction.Events.Tick", "rate(1 minute)", null)),
                function(template, "TickFunction").events());
    }

    @Test
    void longFormIntrinsicsReadLikeShortForm() {
        String yaml = """
                Parameters:
                  Name: {Type: String, Default: jobs}
                Resources:
                  Q:
                    Type: AWS::SQS::Queue
                    Properties:
                      QueueName: {"Fn::Sub": ["${Prefix}-${Name}", {Prefix: {"Ref": "AWS::StackName"}}]}
                      RedrivePolicy: '{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dead","maxReceiveCount":5}'
                """;
        QueueDefinition queue = Template.parse(yaml, Map.of(), ref -> "x").queues().getFirst();

        assertEquals("runner-jobs", queue.name());
        assertEquals("dead", queue.deadLetterQueueName().orElseThrow());
    }

    @Test
    void aFormTheLocalRuntimeDoesNotEvaluateIsRefusedWhereAPropertyItReadsUsesIt() {
        String yaml = """
                Resources:
                  Q:
                    Type: AWS::SQS::Queue
                    Properties:
                      QueueName: !Join ['-', [jobs, !Select [0, !GetAZs '']]]
                """;
        Template template = Template.parse(yaml, Map.of(), ref -> "x");

        var error = assertThrows(TemplateException.class, template::queues);
        assertEquals("Fn::GetAZs is not supported by the local runtime (Q.QueueName)", error.getMessage());
    }

    @Test
    void aResourceTheLocalRuntimeDoesNotRunMayUseAnyForm() {
        String yaml = """
                Resources:
                  Q:
                    Type: AWS::SQS::Queue
                  Subnet:
                    Type: AWS::EC2::Subnet
                    Properties:
                      AvailabilityZone: !Select [0, !GetAZs '']
                """;
        Template template = Template.parse(yaml, Map.of(), ref -> "x");

        assertEquals(List.of("runner-Q"), template.queues().stream().map(QueueDefinition::name).toList());
    }

    @Test
    void aFunctionsRoleOfTheTemplateGrantsItsInlineStatementsAndARoleGivenOtherwiseIsNotChecked() {
        String yaml = """
                Resources:
                  Q:
                    Type: AWS::SQS::Queue
                  OwnRole:
                    Type: AWS::IAM::Role
                    Properties:
                      ManagedPolicyArns:
                        - !Sub 'arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole'
                      Policies:
                        - PolicyName: function
                          PolicyDocument:
                            Statement:
                              - {Effect: Allow, Action: sqs:SendMessage, Resource: !GetAtt Q.Arn}
                  Own:
                    Type: AWS::Serverless::Function
                    Properties: {Handler: a.B, Role: !GetAtt OwnRole.Arn}
                  Elsewhere:
                    Type: AWS::Serverless::Function
                    Properties: {Handler: a.B, Role: 'arn:aws:iam::000000000000:role/elsewhere'}
                """;
        Template template = Template.parse(yaml, Map.of(), ref -> "x");

        assertEquals(List.of(new PolicyStatement(true, List.of("sqs:SendMessage"), List.of(ARN_PREFIX + "runner-Q"))),
                function(template, "Own").policies().orElseThrow());
        assertTrue(function(template, "Elsewhere").policies().isEmpty());
        assertEquals(List.of("Elsewhere: its Role is not an AWS::IAM::Role of this template; its AWS calls are not checked against IAM here"),
                template.warnings());
    }

    @Test
    void aRefToAQueueBeforeItExistsIsAClearError() {
        Template template = Template.parse(text(), Map.of(), ref -> "x");
        var error = assertThrows(TemplateException.class, template::functions);
        assertTrue(error.getMessage().contains("WorkQueue"), error.getMessage());
    }

    @Test
    void anUnknownParameterOverrideIsRejected() {
        var error = assertThrows(TemplateException.class, () -> Template.parse(text(), Map.of("Nope", "1"), ref -> "x"));
        assertEquals("parameter override Nope names no parameter of the template", error.getMessage());
    }

    private static Template fixture(Map<String, String> overrides) {
        Template template = Template.parse(text(), overrides, ref -> "secret<" + ref + ">");
        template.queues().forEach(q -> template.queueCreated(q.logicalId(), "http://sqs.local/" + q.name()));
        return template;
    }

    private static FunctionDefinition function(Template template, String logicalId) {
        return template.functions().stream().filter(f -> f.logicalId().equals(logicalId)).findFirst().orElseThrow();
    }

    private static String text() {
        try (InputStream in = TemplateTest.class.getResourceAsStream("/engine-template.yaml")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
