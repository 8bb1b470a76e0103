package dev.runner.local;

import dev.runner.local.demo.DemoIntegration;
import dev.runner.secrets.SecretUnavailableException;
import dev.runner.secrets.SecretsManagerSource;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;
import software.amazon.awssdk.services.secretsmanager.model.SecretsManagerException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The local runtime refuses what IAM would refuse in AWS, for a template whose WebhookFunction
 * lost the grant to send to its tier: every webhook then fails here, not first in production.
 * Each function signs as itself; its SQS and Secrets Manager calls are held to its policies;
 * operators (the runtime, the AWS CLI) are not. With a Redis AUTH secret named, Redis requires
 * the token and the functions read it from the local Secrets Manager.
 */
class LocalIamIT {

    /** The webhook function's own database login, as the template names it. */
    private static final String WEBHOOK_LOGIN = "runner/database-login/runner_webhook";
    private static LocalRuntime runtime;
    private static RunnerApi api;
    private static Path template;

    @BeforeAll
    static void start() throws IOException {
        template = Files.createTempFile("template-without-webhook-grant", ".yaml");
        Files.writeString(template, withoutWebhookSendGrant(Files.readString(LocalRuntimeIT.projectTemplate())));
        runtime = LocalRuntime.start(LocalOptions.defaults(template, Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))
                .withParameters(Map.of("RedisAuthSecretName", "runner/redis-auth")).withFreePorts());
        api = new RunnerApi(runtime.apiUrl(), runtime.apiKey());
    }

    @AfterAll
    static void stop() throws IOException {
        if (runtime != null) {
            runtime.close();
        }
        Files.deleteIfExists(template);
    }

    @Test
    void aWebhookWhoseTierIsNotGrantedFailsLocallyAsInAws() {
        String body = "{\"externalId\":\"c-" + UUID.randomUUID() + "\",\"name\":\"Ada\"}";
        var answer = api.webhook(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY, DemoIntegration.WEBHOOK_SECRET, body);

        assertEquals(503, answer.status(), "the send to items-webhook is refused: " + answer.body());
    }

    @Test
    void sqsRequestsAreHeldToTheSendingFunctionsPolicies() {
        String itemsWebhook = runtime.queueUrls().get("ItemsWebhookQueue");
        String itemsDlq = runtime.queueUrls().get("ItemsDlq");
        try (SqsClient api = sqs("runner-ApiFunction"); SqsClient webhook = sqs("runner-WebhookFunction");
             SqsClient operator = sqs("local")) {
            api.sendMessage(b -> b.queueUrl(itemsWebhook).messageBody("{}").delaySeconds(900));

            SqsException refused = assertThrows(SqsException.class, () -> api.sendMessage(b -> b.queueUrl(itemsDlq).messageBody("{}")));
            assertEquals(403, refused.statusCode());
            assertEquals("AccessDenied", refused.awsErrorDetails().errorCode());
            assertTrue(refused.getMessage().contains("runner-ApiFunction is not authorized to perform: sqs:SendMessage on resource: "
                    + "arn:aws:sqs:us-east-1:000000000000:runner-items-dlq"), refused.getMessage());
            assertThrows(SqsException.class, () -> webhook.sendMessage(b -> b.queueUrl(itemsWebhook).messageBody("{}")));

            operator.sendMessage(b -> b.queueUrl(itemsDlq).messageBody("{}").delaySeconds(900));
        }
    }

    @Test
    void aFunctionsKeyOnAnythingButTheJsonProtocolIsRefusedNotPassedUnchecked() throws Exception {
        String itemsDlq = runtime.queueUrls().get("ItemsDlq");
        // The query protocol ElasticMQ still serves: with a function's key it would bypass the check.
        var request = java.net.http.HttpRequest.newBuilder(URI.create(runtime.endpoints().sqsEndpoint() + "/"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=runner-ApiFunction/20261130/us-east-1/sqs/aws4_request, "
                        + "SignedHeaders=host;x-amz-date, Signature=" + "0".repeat(64))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("Action=SendMessage&QueueUrl="
                        + java.net.URLEncoder.encode(itemsDlq, java.nio.charset.StandardCharsets.UTF_8) + "&MessageBody=x"))
                .build();
        try (var http = java.net.http.HttpClient.newHttpClient()) {
            var answer = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString());

            assertEquals(403, answer.statusCode(), answer.body());
            assertTrue(answer.body().contains("AccessDeniedException"), answer.body());
        }
    }

    @Test
    void secretsAreHeldToTheReadingFunctionsPolicies() {
        try (SecretsManagerClient webhook = secretsManager("runner-WebhookFunction"); SecretsManagerClient api = secretsManager("runner-ApiFunction")) {
            assertTrue(webhook.getSecretValue(b -> b.secretId(WEBHOOK_LOGIN)).secretString().contains("\"username\":\"runner_webhook\""));
            // The owner's login is Migrate's alone.
            assertThrows(SecretsManagerException.class, () -> webhook.getSecretValue(b -> b.secretId("runner/database")));
            assertEquals(runtime.apiKey(), api.getSecretValue(b -> b.secretId("runner/api-key")).secretString());

            SecretsManagerException refused = assertThrows(SecretsManagerException.class,
                    () -> webhook.getSecretValue(b -> b.secretId("runner/api-key")));
            assertEquals("AccessDeniedException", refused.awsErrorDetails().errorCode());
            assertThrows(SecretsManagerException.class, () -> api.getSecretValue(b -> b.secretId("runner/handler-signing-secret")));
        }
    }

    @Test
    void runnersOwnSecretsManagerClientReadsWhatItsRoleMayAndNamesTheRefusal() {
        try (SecretsManagerSource webhook = new SecretsManagerSource(runtime.secretsEndpoint(), "us-east-1",
                StaticCredentialsProvider.create(AwsSessionCredentials.create("runner-WebhookFunction", "local", "a-session-token")))) {
            assertTrue(webhook.read(WEBHOOK_LOGIN).contains("\"username\""));
            SecretUnavailableException refused = assertThrows(SecretUnavailableException.class, () -> webhook.read("runner/api-key"));
            assertTrue(refused.getMessage().startsWith("secret runner/api-key could not be read: AccessDeniedException: "), refused.getMessage());
            assertFalse(refused.getMessage().contains(runtime.apiKey()), "the refusal does not carry the value");
            SecretUnavailableException missing = assertThrows(SecretUnavailableException.class, () -> webhook.read("runner/no-such-secret"));
            assertTrue(missing.getMessage().contains("(HTTP 400)"), missing.getMessage());
        }
    }

    @Test
    void redisRequiresTheTokenOfItsSecretAndTheFunctionsUseIt() throws IOException {
        String runId = api.startRun(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                .until(() -> api.run(runId).path("status").asText(), "completed"::equals);

        String withToken = runtime.endpoints().redisUrl();
        String token = runtime.secrets().find("runner/redis-auth").orElseThrow().value();
        assertTrue(withToken.contains(":" + token + "@"), "operators get the token with the URL");
        RedisClient authenticated = RedisClient.create(withToken);
        try (var connection = authenticated.connect()) {
            // Without the token the guard would have failed open and the run completed all the same: the keys show it did not.
            assertTrue(!connection.sync().keys("runner:*").isEmpty(), "the functions wrote to Redis with the token of its secret");
        } finally {
            authenticated.shutdown();
        }
        assertTrue(anonymousPing(URI.create(withToken)).startsWith("-NOAUTH"), "without the token Redis refuses");
    }

    /**
     * PING without AUTH, on a socket of its own: what the server answers a client without the token.
     * Not through Lettuce, whose handshake fails there in more than one way (seen: its handshake
     * handler gone from a pipeline the server had closed, instead of NOAUTH).
     */
    private static String anonymousPing(URI redis) throws IOException {
        try (var socket = new Socket(redis.getHost(), redis.getPort())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write("*1\r\n$4\r\nPING\r\n".getBytes(StandardCharsets.US_ASCII));
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }

    private static SqsClient sqs(String accessKeyId) {
        return SqsClient.builder().endpointOverride(URI.create(runtime.endpoints().sqsEndpoint())).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, "local")))
                .httpClient(UrlConnectionHttpClient.create()).build();
    }

    private static SecretsManagerClient secretsManager(String accessKeyId) {
        return SecretsManagerClient.builder().endpointOverride(runtime.secretsEndpoint()).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, "local")))
                .httpClient(UrlConnectionHttpClient.create()).build();
    }

    /** template.yaml, with items-webhook taken out of the queues WebhookFunction's role may send to. */
    static String withoutWebhookSendGrant(String template) {
        int role = template.indexOf("  WebhookFunctionRole:\n");
        int send = template.indexOf("Action: sqs:SendMessage\n", role);
        String grant = "                  - !GetAtt ItemsWebhookQueue.Arn\n";
        int at = template.indexOf(grant, send);
        int nextStatement = template.indexOf("- Effect:", send);
        if (role < 0 || send < 0 || at < 0 || at > template.indexOf("  ApiFunctionRole:\n") || (nextStatement >= 0 && at > nextStatement)) {
            throw new IllegalStateException("WebhookFunction's grant to items-webhook is not where this test expects it");
        }
        return template.substring(0, at) + template.substring(at + grant.length());
    }
}
