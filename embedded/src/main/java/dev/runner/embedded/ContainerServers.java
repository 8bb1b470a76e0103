package dev.runner.embedded;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.localstack.LocalStackContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Postgres, Valkey and LocalStack (SQS, Secrets Manager) in Docker containers, the servers of
 * {@link TestServers} when {@code RUNNER_TEST_SERVERS=containers}: closer to AWS than the embedded
 * ones (LocalStack's SQS, Valkey as ElastiCache runs it), at the cost of Docker. Only this class
 * touches Testcontainers, so nothing loads it unless containers are asked for. Images can be
 * replaced with {@code RUNNER_TEST_POSTGRES_IMAGE}, {@code RUNNER_TEST_REDIS_IMAGE} and
 * {@code RUNNER_TEST_LOCALSTACK_IMAGE} (e.g. a registry mirror).
 */
final class ContainerServers {

    static final String POSTGRES_IMAGE = "postgres:17-alpine";
    static final String REDIS_IMAGE = "valkey/valkey:8-alpine";
    // Pinned: newer LocalStack images may ask for an account token.
    static final String LOCALSTACK_IMAGE = "localstack/localstack:4.4";
    private static final int REDIS_PORT = 6379;

    private ContainerServers() {}

    /** Why containers cannot run here, or empty when a Docker engine answers. */
    static Optional<String> dockerProblem() {
        try {
            return DockerClientFactory.instance().isDockerAvailable()
                    ? Optional.empty()
                    : Optional.of("no Docker engine answers (DOCKER_HOST, the Docker socket or ~/.testcontainers.properties)");
        } catch (RuntimeException e) {
            return Optional.of("Docker could not be asked: " + e.getMessage());
        }
    }

    /** Starts the three containers; a JVM shutdown hook (and Testcontainers' reaper) removes them. */
    static EmbeddedServers.Endpoints start(Map<String, String> environment) {
        var postgres = new PostgreSQLContainer(image(environment, "RUNNER_TEST_POSTGRES_IMAGE", POSTGRES_IMAGE)
                .asCompatibleSubstituteFor("postgres"))
                // As the embedded server: many connections (the pipeline tests open pools), no fsync.
                .withCommand("postgres", "-c", "max_connections=300", "-c", "fsync=off", "-c", "synchronous_commit=off");
        var redis = new GenericContainer<>(image(environment, "RUNNER_TEST_REDIS_IMAGE", REDIS_IMAGE)).withExposedPorts(REDIS_PORT);
        var localstack = new LocalStackContainer(image(environment, "RUNNER_TEST_LOCALSTACK_IMAGE", LOCALSTACK_IMAGE)
                .asCompatibleSubstituteFor("localstack/localstack"))
                .withServices("sqs", "secretsmanager");
        List<GenericContainer<?>> containers = List.of(postgres, redis, localstack);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> containers.forEach(GenericContainer::stop), "test-containers-stop"));
        containers.parallelStream().forEach(GenericContainer::start);
        String endpoint = localstack.getEndpoint().toString();
        return new EmbeddedServers.Endpoints(
                postgres.getJdbcUrl(), postgres.getUsername(), postgres.getPassword(),
                "redis://" + redis.getHost() + ":" + redis.getMappedPort(REDIS_PORT),
                endpoint, endpoint);
    }

    private static DockerImageName image(Map<String, String> environment, String variable, String otherwise) {
        return DockerImageName.parse(environment.getOrDefault(variable, otherwise));
    }
}
