package dev.runner.config;

import dev.runner.redis.RedisMode;
import dev.runner.security.Cidr;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

public class RunnerConfigTest {

    /** The variables without which no function starts; the rest default. */
    public static Map<String, String> minimal() {
        Map<String, String> env = new HashMap<>();
        env.put("RUNNER_DATABASE_URL", "jdbc:postgresql://db/runner");
        env.put("RUNNER_REDIS_URL", "redis://cache:6379");
        env.put("RUNNER_HANDLER_SIGNING_SECRET", "a-signing-secret");
        for (String queue : new String[] {"RUNS_MANUAL", "RUNS_SCHEDULE", "ITEMS_WEBHOOK", "ITEMS_MANUAL", "ITEMS_QUEUE",
                "ITEMS_SCHEDULE", "INGEST", "RUNS_DLQ", "ITEMS_DLQ", "INGEST_DLQ"}) {
            env.put("RUNNER_QUEUE_" + queue, "https://sqs.us-east-1.amazonaws.com/1/runner-" + queue.toLowerCase().replace('_', '-'));
        }
        return env;
    }

    @Test
    void defaultsAreTheSeedsValues() {
        RunnerConfig config = RunnerConfig.from(minimal());
        assertEquals(3, config.retry().maxAttempts());
        assertEquals(Duration.ofSeconds(5), config.retry().backoffBase());
        assertEquals(5, config.breaker().failureThreshold());
        assertEquals(Duration.ofSeconds(30), config.breaker().openFor());
        assertEquals(2, config.breaker().halfOpenSuccesses());
        assertEquals(1000, config.tenantLimit().perMinute());
        assertEquals(Duration.ofSeconds(60), config.typesCacheTtl());
        assertEquals("https://sqs.us-east-1.amazonaws.com/1/runner-items-webhook", config.queues().items(Trigger.WEBHOOK));
    }

    @Test
    void snapStartsContainerCredentialsEndpointIsReadWithItsTokenOrTokenFileAndNeverPrinted() throws java.io.IOException {
        Map<String, String> env = minimal();
        assertEquals(null, RunnerConfig.from(env).credentialsEndpoint());

        env.put("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9001/2021-04-23/credentials");
        env.put("AWS_CONTAINER_AUTHORIZATION_TOKEN", "the-token");
        RunnerConfig.CredentialsEndpoint endpoint = RunnerConfig.from(env).credentialsEndpoint();
        assertEquals("http://127.0.0.1:9001/2021-04-23/credentials", endpoint.uri());
        assertEquals("the-token", endpoint.authorization());
        assertFalse(RunnerConfig.from(env).toString().contains("the-token"));
        assertFalse(endpoint.toString().contains("the-token"));

        java.nio.file.Path file = java.nio.file.Files.createTempFile("token", ".txt");
        java.nio.file.Files.writeString(file, "from-file\n");
        env.remove("AWS_CONTAINER_AUTHORIZATION_TOKEN");
        env.remove("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        env.put("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc");
        env.put("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", file.toString());
        endpoint = RunnerConfig.from(env).credentialsEndpoint();
        assertEquals("http://169.254.170.2/v2/credentials/abc", endpoint.uri());
        assertEquals("from-file", endpoint.authorization());
        java.nio.file.Files.delete(file);
    }

    @Test
    void retentionIsReadAsIso8601DurationsAndDeliveriesOfUntimedSchemesAreKeptAsLongAsRuns() {
        RunnerConfig defaults = RunnerConfig.from(minimal());
        assertEquals(new RunnerConfig.Retention(Duration.ofDays(30), Duration.ofDays(90)), defaults.retention());
        assertEquals(Duration.ofDays(1), defaults.webhooks().deliveryWindow(dev.runner.security.WebhookScheme.STANDARD));
        assertEquals(Duration.ofDays(30), defaults.webhooks().deliveryWindow(dev.runner.security.WebhookScheme.GITHUB));

        Map<String, String> env = minimal();
        env.put("RUNNER_RETAIN_RUNS", "PT90S");
        env.put("RUNNER_RETAIN_DEAD", "PT3M");
        RunnerConfig compressed = RunnerConfig.from(env);
        assertEquals(new RunnerConfig.Retention(Duration.ofSeconds(90), Duration.ofMinutes(3)), compressed.retention());
        assertEquals(Duration.ofDays(1), compressed.webhooks().deliveryWindow(dev.runner.security.WebhookScheme.GITHUB),
                "never shorter than the dedup window");

        env.put("RUNNER_RETAIN_RUNS", "30 days");
        assertEquals("RUNNER_RETAIN_RUNS must be an ISO-8601 duration such as P30D or PT90S: 30 days",
                assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        env.put("RUNNER_RETAIN_RUNS", "PT0S");
        assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env));
    }

    @Test
    void theDedupWindowIsNeverShorterThanTheSignatureTolerance() {
        Map<String, String> env = minimal();
        env.put("RUNNER_WEBHOOK_DEDUP_S", "60");
        assertEquals("RUNNER_WEBHOOK_DEDUP_S (60) must be at least RUNNER_WEBHOOK_TOLERANCE_S (300)",
                assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
    }

    @Test
    void backoffDoublesFromTheBase() {
        RunnerConfig.Retry retry = new RunnerConfig.Retry(3, Duration.ofSeconds(5));
        assertEquals(Duration.ofSeconds(5), retry.backoff(1));
        assertEquals(Duration.ofSeconds(10), retry.backoff(2));
        assertEquals(Duration.ofSeconds(20), retry.backoff(3));
    }

    @Test
    void aBadValueNamesItsVariable() {
        Map<String, String> env = minimal();
        env.put("RUNNER_MAX_ATTEMPTS", "three");
        assertEquals("RUNNER_MAX_ATTEMPTS must be a whole number: three",
                assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        env.put("RUNNER_MAX_ATTEMPTS", "0");
        assertEquals("RUNNER_MAX_ATTEMPTS must be > 0: 0", assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        env.remove("RUNNER_MAX_ATTEMPTS");
        env.remove("RUNNER_QUEUE_ITEMS_DLQ");
        assertEquals("RUNNER_QUEUE_ITEMS_DLQ is not set", assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
    }

    @Test
    void handlerNetworksAreNoneUnlessAllowedAndABadOneNamesTheVariable() {
        Map<String, String> env = minimal();
        assertEquals(List.of(), RunnerConfig.from(env).handlerAllowedNetworks());
        env.put("RUNNER_HANDLER_ALLOWED_NETWORKS", "10.0.0.0/8, fd00::/8");
        assertEquals(List.of(Cidr.parse("10.0.0.0/8"), Cidr.parse("fd00::/8")), RunnerConfig.from(env).handlerAllowedNetworks());
        env.put("RUNNER_HANDLER_ALLOWED_NETWORKS", "10.0.0.0/8,vpc");
        assertEquals("RUNNER_HANDLER_ALLOWED_NETWORKS must be a comma-separated list of networks such as 10.0.0.0/8,fd00::/8:"
                + " not an IPv4 or IPv6 address: vpc", assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
    }

    @Test
    void secretsStayOutOfToString() {
        Map<String, String> env = minimal();
        env.put("RUNNER_DATABASE_PASSWORD", "hunter2");
        env.put("AWS_ACCESS_KEY_ID", "AKIA");
        env.put("AWS_SECRET_ACCESS_KEY", "very-secret");
        env.put("RUNNER_API_KEY", "the-api-key");
        env.put("RUNNER_HANDLER_SIGNING_SECRET", "the-signing-secret");
        env.put("RUNNER_REDIS_URL", "rediss://user:redis-password@cache:6379");
        String text = RunnerConfig.from(env).toString();
        for (String secret : new String[] {"the-api-key", "the-signing-secret", "redis-password"}) {
            assertFalse(text.contains(secret), text);
        }
        assertFalse(text.contains("hunter2"), text);
        assertFalse(text.contains("very-secret"), text);
    }

    @Test
    void everyQueueRoleIsReadFromItsOwnVariable() {
        RunnerConfig config = RunnerConfig.from(minimal());
        for (QueueRole role : QueueRole.values()) {
            assertEquals(minimal().get(role.variable()), config.queues().url(role), role.name());
        }
    }

    @Test
    void secretsAreNamedByRoleAndNeverGivenTwoWays() {
        Map<String, String> env = minimal();
        env.put("RUNNER_DATABASE_SECRET", "runner/database");
        env.put("RUNNER_API_KEY_SECRET", "runner/api-key");
        RunnerConfig config = RunnerConfig.from(env);
        assertEquals("runner/database", config.secret(SecretRole.DATABASE));
        assertEquals("runner/api-key", config.secret(SecretRole.API_KEY));
        assertEquals(null, config.secret(SecretRole.REDIS_AUTH));

        env.put("RUNNER_API_KEY", "by-value");
        assertEquals("RUNNER_API_KEY_SECRET and RUNNER_API_KEY are both set: give the api key by its secret or by value, not both",
                assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        env.remove("RUNNER_API_KEY");
        env.put("RUNNER_DATABASE_PASSWORD", "hunter2");
        assertTrue(assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage()
                .startsWith("RUNNER_DATABASE_SECRET and RUNNER_DATABASE_PASSWORD are both set"));
    }

    @Test
    void redisModeIsSaidNotGuessedFromTheScheme() {
        Map<String, String> env = minimal();
        env.put("RUNNER_REDIS_URL", "rediss://cache:6379");
        assertEquals(RedisMode.STANDALONE, RunnerConfig.from(env).redisMode());
        env.put("RUNNER_REDIS_MODE", "cluster");
        assertEquals(RedisMode.CLUSTER, RunnerConfig.from(env).redisMode());
        env.put("RUNNER_REDIS_MODE", "sharded");
        assertEquals("RUNNER_REDIS_MODE must be standalone or cluster: sharded",
                assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        env.put("RUNNER_REDIS_MODE", "cluster");
        env.put("RUNNER_REDIS_URL", "redis-cluster://a:1,b:2");
        assertTrue(assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage()
                .startsWith("RUNNER_REDIS_URL must start with redis:// or rediss://"));
    }

    @Test
    void aPrivateCaForRedisIsCheckedAtTheStart() throws Exception {
        Map<String, String> env = minimal();
        env.put("RUNNER_REDIS_URL", "rediss://valkey.internal:6379");
        assertEquals(null, RunnerConfig.from(env).redisTrustedCertificates(), "the JDK's roots");

        Path directory = Files.createTempDirectory("redis-ca");
        try {
            Path missing = directory.resolve("missing.pem");
            env.put("RUNNER_REDIS_CA_FILE", missing.toString());
            assertEquals("RUNNER_REDIS_CA_FILE " + missing + " is not a readable file",
                    assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());

            Path notPem = Files.writeString(directory.resolve("key.pem"), "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
            env.put("RUNNER_REDIS_CA_FILE", notPem.toString());
            assertTrue(assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage()
                    .startsWith("RUNNER_REDIS_CA_FILE " + notPem + " holds no PEM certificate"));

            Path ca = Files.writeString(directory.resolve("ca.pem"), aCertificatePem());
            env.put("RUNNER_REDIS_CA_FILE", ca.toString());
            assertEquals(ca, RunnerConfig.from(env).redisTrustedCertificates());
            assertTrue(RunnerConfig.from(env).toString().contains("redisTrustedCertificates=" + ca));

            env.put("RUNNER_REDIS_URL", "redis://valkey.internal:6379");
            assertEquals("RUNNER_REDIS_CA_FILE is for TLS, but RUNNER_REDIS_URL does not start with rediss://",
                    assertThrows(IllegalStateException.class, () -> RunnerConfig.from(env)).getMessage());
        } finally {
            try (var files = Files.list(directory)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
            Files.delete(directory);
        }
    }

    /** A CA certificate of the JDK's own trust store, as PEM. */
    private static String aCertificatePem() throws Exception {
        KeyStore roots = KeyStore.getInstance(Path.of(System.getProperty("java.home"), "lib", "security", "cacerts").toFile(), (char[]) null);
        byte[] der = roots.getCertificate(roots.aliases().nextElement()).getEncoded();
        return "-----BEGIN CERTIFICATE-----\n" + Base64.getMimeEncoder().encodeToString(der) + "\n-----END CERTIFICATE-----\n";
    }
}
