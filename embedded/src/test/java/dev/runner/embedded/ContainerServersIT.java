package dev.runner.embedded;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.secretsmanager.SecretsManagerClient;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The containers option of {@link TestServers}: Postgres, Valkey and LocalStack from Docker, and
 * without Docker a skip, never a failure. The machines this project is built on have no Docker, so
 * here the first test is skipped and the second runs.
 */
class ContainerServersIT {

    private static final Map<String, String> CONTAINERS = Map.of(TestServers.MODE, "containers");

    @Test
    void containersServePostgresValkeySqsAndSecretsManager() throws Exception {
        assumeTrue("containers".equals(System.getenv(TestServers.MODE)),
                () -> skip("set " + TestServers.MODE + "=containers (with a Docker engine) to run the suite on containers"));
        var endpoints = TestServers.get();

        try (var connection = DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
             var result = connection.createStatement().executeQuery("select 1")) {
            assertTrue(result.next());
        }
        assertEquals("+PONG", ping(URI.create(endpoints.redisUrl())));
        var credentials = StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));
        try (var sqs = SqsClient.builder().httpClient(UrlConnectionHttpClient.create()).region(Region.US_EAST_1)
                .credentialsProvider(credentials).endpointOverride(URI.create(endpoints.sqsEndpoint())).build()) {
            String url = sqs.createQueue(b -> b.queueName("containers-it")).queueUrl();
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("hello"));
            assertEquals("hello", sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)).messages().getFirst().body());
        }
        try (var secrets = SecretsManagerClient.builder().httpClient(UrlConnectionHttpClient.create()).region(Region.US_EAST_1)
                .credentialsProvider(credentials).endpointOverride(URI.create(endpoints.secretsManagerEndpoint())).build()) {
            secrets.createSecret(b -> b.name("runner/containers-it").secretString("s3cret"));
            assertEquals("s3cret", secrets.getSecretValue(b -> b.secretId("runner/containers-it")).secretString());
        }
    }

    @Test
    void withoutDockerContainersSkipTheTestsThatNeedServers() {
        assumeTrue(ContainerServers.dockerProblem().isPresent(), () -> skip("a Docker engine answers here"));

        var skipped = assertThrows(TestServers.ServersUnavailable.class, () -> TestServers.resolve(CONTAINERS));

        assertTrue(skipped.getMessage().startsWith("skipped: RUNNER_TEST_SERVERS=containers, but no Docker engine answers"),
                skipped.getMessage());
        System.out.println(skipped.getMessage());
    }

    private static String skip(String why) {
        String message = "skipped: " + why;
        System.out.println(message);
        return message;
    }

    private static String ping(URI redis) throws IOException {
        try (var socket = new Socket(redis.getHost(), redis.getPort())) {
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] reply = new byte[5];
            int read = socket.getInputStream().readNBytes(reply, 0, 5);
            return new String(reply, 0, read, StandardCharsets.US_ASCII);
        }
    }
}
