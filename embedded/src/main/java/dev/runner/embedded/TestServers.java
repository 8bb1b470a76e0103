package dev.runner.embedded;

import org.junit.jupiter.api.Assumptions;

import java.net.URI;
import java.util.Map;
import java.util.Optional;

/**
 * The servers a test run talks to, started once per JVM. {@code RUNNER_TEST_SERVERS} chooses:
 * {@code embedded} (the default: Postgres, Redis and ElasticMQ in this JVM, nothing to install) or
 * {@code containers} (Postgres, Valkey and LocalStack's SQS and Secrets Manager in Docker, through
 * Testcontainers). Without a Docker engine, containers skip every test that asks for the servers,
 * with the reason, rather than failing it. Either way {@code DATABASE_URL}, {@code REDIS_URL} and
 * {@code SQS_ENDPOINT_URL}, when set, replace one server each (a user's own, or a running LocalStack).
 */
public final class TestServers {

    /** The variable that chooses the servers. */
    public static final String MODE = "RUNNER_TEST_SERVERS";

    private static EmbeddedServers.Endpoints endpoints;
    /** Why containers cannot start: said once, then every caller is skipped with it. */
    private static String unavailable;

    private TestServers() {}

    public static synchronized EmbeddedServers.Endpoints get() {
        if (endpoints == null && unavailable == null) {
            try {
                endpoints = resolve(System.getenv());
            } catch (ServersUnavailable e) {
                unavailable = e.getMessage();
                System.err.println(unavailable);
            }
        }
        if (unavailable != null) {
            Assumptions.abort(unavailable);
        }
        return endpoints;
    }

    /** The servers {@code environment} asks for; starts what no variable replaces. */
    static EmbeddedServers.Endpoints resolve(Map<String, String> environment) {
        String databaseUrl = environment.get("DATABASE_URL");
        String redisUrl = environment.get("REDIS_URL");
        String sqsUrl = environment.get("SQS_ENDPOINT_URL");
        EmbeddedServers.Endpoints started = null;
        if (databaseUrl == null || redisUrl == null || sqsUrl == null) {
            started = switch (mode(environment)) {
                case EMBEDDED -> {
                    EmbeddedServers servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree());
                    Runtime.getRuntime().addShutdownHook(new Thread(servers::close, "embedded-servers-stop"));
                    yield servers.endpoints();
                }
                case CONTAINERS -> containers(environment);
            };
        }
        String jdbcUrl = started == null ? null : started.jdbcUrl();
        String user = started == null ? null : started.dbUser();
        String password = started == null ? null : started.dbPassword();
        if (databaseUrl != null) {
            var db = Database.parse(databaseUrl, environment);
            jdbcUrl = db.jdbcUrl();
            user = db.user();
            password = db.password();
        }
        return new EmbeddedServers.Endpoints(
                jdbcUrl, user, password,
                redisUrl != null ? redisUrl : started.redisUrl(),
                sqsUrl != null ? sqsUrl : started.sqsEndpoint(),
                started == null ? null : started.secretsManagerEndpoint());
    }

    enum Mode { EMBEDDED, CONTAINERS }

    static Mode mode(Map<String, String> environment) {
        String value = environment.getOrDefault(MODE, "embedded").strip();
        return switch (value) {
            case "", "embedded" -> Mode.EMBEDDED;
            case "containers" -> Mode.CONTAINERS;
            default -> throw new IllegalArgumentException(MODE + " is \"" + value + "\"; use embedded (the default) or containers");
        };
    }

    private static EmbeddedServers.Endpoints containers(Map<String, String> environment) {
        Optional<String> problem;
        try {
            problem = ContainerServers.dockerProblem();
        } catch (NoClassDefFoundError e) {
            throw new IllegalStateException(MODE + "=containers, but this module's tests lack Testcontainers: add "
                    + "org.testcontainers:testcontainers, testcontainers-postgresql and testcontainers-localstack in test scope", e);
        }
        if (problem.isPresent()) {
            throw new ServersUnavailable("skipped: " + MODE + "=containers, but " + problem.get()
                    + "; tests that need Postgres, Redis or SQS are skipped (unset " + MODE + " for the embedded servers)");
        }
        return ContainerServers.start(environment);
    }

    /** Containers were asked for where they cannot run: a reason to skip, not a failure. */
    static final class ServersUnavailable extends RuntimeException {
        ServersUnavailable(String message) {
            super(message);
        }
    }

    /** A database URL in either form: {@code postgres://user:pass@host:port/db} or {@code jdbc:postgresql://…}. */
    record Database(String jdbcUrl, String user, String password) {
        static Database parse(String url, Map<String, String> environment) {
            if (url.startsWith("jdbc:")) {
                return new Database(url, environment.get("DATABASE_USER"), environment.get("DATABASE_PASSWORD"));
            }
            URI uri = URI.create(url);
            String user = null;
            String password = null;
            if (uri.getUserInfo() != null) {
                String[] parts = uri.getUserInfo().split(":", 2);
                user = parts[0];
                password = parts.length > 1 ? parts[1] : null;
            }
            int port = uri.getPort() == -1 ? 5432 : uri.getPort();
            String query = uri.getQuery() == null ? "" : "?" + uri.getQuery();
            return new Database("jdbc:postgresql://" + uri.getHost() + ":" + port + uri.getPath() + query, user, password);
        }
    }
}
