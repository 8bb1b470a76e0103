package dev.runner.embedded;

import java.net.URI;

/**
 * The servers a test run talks to: started embedded once per JVM, or taken from
 * {@code DATABASE_URL}, {@code REDIS_URL} and {@code SQS_ENDPOINT_URL} when set, so the suite
 * can run against LocalStack or a user's own servers. Each variable replaces one server.
 */
public final class TestServers {

    private static EmbeddedServers.Endpoints endpoints;

    private TestServers() {}

    public static synchronized EmbeddedServers.Endpoints get() {
        if (endpoints == null) {
            endpoints = resolve();
        }
        return endpoints;
    }

    private static EmbeddedServers.Endpoints resolve() {
        String databaseUrl = System.getenv("DATABASE_URL");
        String redisUrl = System.getenv("REDIS_URL");
        String sqsUrl = System.getenv("SQS_ENDPOINT_URL");
        EmbeddedServers.Endpoints embedded = null;
        if (databaseUrl == null || redisUrl == null || sqsUrl == null) {
            EmbeddedServers servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree());
            Runtime.getRuntime().addShutdownHook(new Thread(servers::close, "embedded-servers-stop"));
            embedded = servers.endpoints();
        }
        String jdbcUrl = embedded == null ? null : embedded.jdbcUrl();
        String user = embedded == null ? null : embedded.dbUser();
        String password = embedded == null ? null : embedded.dbPassword();
        if (databaseUrl != null) {
            var db = Database.parse(databaseUrl);
            jdbcUrl = db.jdbcUrl();
            user = db.user();
            password = db.password();
        }
        return new EmbeddedServers.Endpoints(
                jdbcUrl, user, password,
                redisUrl != null ? redisUrl : embedded.redisUrl(),
                sqsUrl != null ? sqsUrl : embedded.sqsEndpoint());
    }

    /** A database URL in either form: {@code postgres://user:pass@host:port/db} or {@code jdbc:postgresql://…}. */
    record Database(String jdbcUrl, String user, String password) {
        static Database parse(String url) {
            if (url.startsWith("jdbc:")) {
                return new Database(url, System.getenv("DATABASE_USER"), System.getenv("DATABASE_PASSWORD"));
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
