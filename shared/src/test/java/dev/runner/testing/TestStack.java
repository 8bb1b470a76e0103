package dev.runner.testing;

import dev.runner.config.RunnerConfig;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.embedded.TestServers;
import dev.runner.store.Database;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.net.URI;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A stack of Runner's queues on the test SQS server, named apart from every other test's, with
 * the environment a function of that stack gets: what template.yaml gives it in AWS, pointed at
 * the test servers, with timings short enough for tests that take seconds.
 */
public final class TestStack implements AutoCloseable {

    /** Queue suffix → its DLQ suffix (null for the DLQs themselves). */
    public static final Map<String, String> QUEUES = orderedQueues();

    private static boolean migrated;

    private final String name;
    private final SqsClient sqs;
    private final Map<String, String> urls = new HashMap<>();
    private final Map<String, String> arns = new HashMap<>();
    private final Map<String, String> environment = new HashMap<>();

    private TestStack(String name, Map<String, String> overrides) {
        this.name = name;
        EmbeddedServers.Endpoints endpoints = TestServers.get();
        migrateOnce(endpoints);
        this.sqs = SqsClient.builder()
                .httpClient(UrlConnectionHttpClient.create())
                .endpointOverride(URI.create(endpoints.sqsEndpoint()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .build();
        QUEUES.forEach((suffix, dlq) -> {
            Map<QueueAttributeName, String> attributes = new HashMap<>();
            attributes.put(QueueAttributeName.VISIBILITY_TIMEOUT, "30");
            if (dlq != null) {
                attributes.put(QueueAttributeName.REDRIVE_POLICY,
                        "{\"deadLetterTargetArn\":\"" + arns.get(dlq) + "\",\"maxReceiveCount\":\"10\"}");
            }
            String url = sqs.createQueue(b -> b.queueName(name + "-" + suffix).attributes(attributes)).queueUrl();
            urls.put(suffix, url);
            arns.put(suffix, sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
                    .attributes().get(QueueAttributeName.QUEUE_ARN));
        });
        environment.put("RUNNER_DATABASE_URL", endpoints.jdbcUrl());
        if (endpoints.dbUser() != null) environment.put("RUNNER_DATABASE_USER", endpoints.dbUser());
        if (endpoints.dbPassword() != null) environment.put("RUNNER_DATABASE_PASSWORD", endpoints.dbPassword());
        environment.put("RUNNER_REDIS_URL", endpoints.redisUrl());
        environment.put("RUNNER_REDIS_PREFIX", name);
        environment.put("RUNNER_SQS_ENDPOINT", endpoints.sqsEndpoint());
        environment.put("AWS_REGION", "us-east-1");
        environment.put("RUNNER_API_KEY", "test-key-" + name);
        environment.put("RUNNER_HANDLER_SIGNING_SECRET", "handler-secret-" + name);
        // Handlers in tests (FakeHandler, HostileHandler) listen on loopback.
        environment.put("RUNNER_HANDLER_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128");
        environment.put("RUNNER_BACKOFF_BASE_MS", "100");
        environment.put("RUNNER_ITEM_CLAIM_LEASE_MS", "20000");
        environment.put("RUNNER_DATABASE_POOL_SIZE", "8");
        QUEUES.keySet().forEach(suffix ->
                environment.put("RUNNER_QUEUE_" + suffix.toUpperCase().replace('-', '_'), urls.get(suffix)));
        environment.putAll(overrides);
    }

    /** A new stack; {@code overrides} replace any RUNNER_* variable. */
    public static TestStack create(Map<String, String> overrides) {
        return new TestStack("t" + UUID.randomUUID().toString().substring(0, 8), overrides);
    }

    public String name() {
        return name;
    }

    public Map<String, String> environment() {
        return Map.copyOf(environment);
    }

    public RunnerConfig config() {
        return RunnerConfig.from(environment);
    }

    public SqsClient sqs() {
        return sqs;
    }

    public String url(String suffix) {
        return require(urls, suffix);
    }

    public String arn(String suffix) {
        return require(arns, suffix);
    }

    public List<String> suffixes() {
        return List.copyOf(QUEUES.keySet());
    }

    private static String require(Map<String, String> map, String suffix) {
        String value = map.get(suffix);
        if (value == null) {
            throw new IllegalArgumentException("no queue " + suffix + " in " + QUEUES.keySet());
        }
        return value;
    }

    private static synchronized void migrateOnce(EmbeddedServers.Endpoints endpoints) {
        if (!migrated) {
            Database.migrate(new RunnerConfig.Database(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword()));
            migrated = true;
        }
    }

    private static Map<String, String> orderedQueues() {
        Map<String, String> queues = new LinkedHashMap<>();
        queues.put("runs-dlq", null);
        queues.put("items-dlq", null);
        queues.put("ingest-dlq", null);
        queues.put("runs-manual", "runs-dlq");
        queues.put("runs-schedule", "runs-dlq");
        queues.put("items-webhook", "items-dlq");
        queues.put("items-manual", "items-dlq");
        queues.put("items-queue", "items-dlq");
        queues.put("items-schedule", "items-dlq");
        queues.put("ingest", "ingest-dlq");
        return java.util.Collections.unmodifiableMap(queues);
    }

    @Override
    public void close() {
        urls.values().forEach(url -> {
            try {
                sqs.deleteQueue(b -> b.queueUrl(url));
            } catch (RuntimeException ignored) {
                // the server may be gone already at JVM shutdown
            }
        });
        sqs.close();
    }
}
