package dev.runner.embedded;

import dev.runner.embedded.sqs.ElasticMqQueues;
import dev.runner.embedded.sqs.LocalSqs;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Postgres, Redis and an SQS-compatible server (ElasticMQ) started in this JVM: what the test
 * harness and the local runtime stand on. Each server binds to 127.0.0.1 only; port 0 picks a
 * free port. {@link #close()} stops all of them, in reverse order of start.
 *
 * <p>ElasticMQ's queues can also be reached in-process ({@link #queues()}); with the SQS front end
 * the SQS endpoint answers a queue's everyday requests from them ({@link LocalSqs}).
 */
public final class EmbeddedServers implements AutoCloseable {

    /**
     * Where the servers listen, embedded or in containers ({@link TestServers}). {@code jdbcUrl}
     * may carry credentials, but user and password are given apart too. {@code secretsManagerEndpoint}
     * is null where there is none (nothing embedded speaks Secrets Manager; LocalStack does).
     */
    public record Endpoints(String jdbcUrl, String dbUser, String dbPassword, String redisUrl, String sqsEndpoint,
                            String secretsManagerEndpoint) {
        /** Servers without Secrets Manager: the embedded ones. */
        public Endpoints(String jdbcUrl, String dbUser, String dbPassword, String redisUrl, String sqsEndpoint) {
            this(jdbcUrl, dbUser, dbPassword, redisUrl, sqsEndpoint, null);
        }
    }

    /** Requested ports; 0 = any free port. */
    public record Ports(int postgres, int redis, int sqs) {
        public static Ports anyFree() {
            return new Ports(0, 0, 0);
        }
    }

    /** A port that is already taken: the one-line message the local runtime prints. */
    public static final class PortTakenException extends RuntimeException {
        public PortTakenException(String server, int port) {
            super(server + " port " + port + " is already in use; choose another or 0 for any free port");
        }
    }

    private final List<AutoCloseable> started = new ArrayList<>();
    private Endpoints endpoints;
    private ElasticMqQueues queues;

    private EmbeddedServers() {}

    /** ElasticMQ answers every SQS request itself. */
    public static EmbeddedServers start(Ports ports) {
        return start(ports, false);
    }

    /** @param sqsFrontEnd whether the SQS endpoint is the front end (the local runtime) or ElasticMQ's REST server itself */
    public static EmbeddedServers start(Ports ports, boolean sqsFrontEnd) {
        var servers = new EmbeddedServers();
        try {
            servers.startAll(ports, sqsFrontEnd);
            return servers;
        } catch (RuntimeException e) {
            servers.close();
            throw e;
        }
    }

    public Endpoints endpoints() {
        return endpoints;
    }

    /** ElasticMQ's queues in-process: what the local runtime's event source mappings poll. */
    public ElasticMqQueues queues() {
        return queues;
    }

    private void startAll(Ports ports, boolean sqsFrontEnd) {
        ensureFree("postgres", ports.postgres());
        ensureFree("redis", ports.redis());
        ensureFree("sqs", ports.sqs());

        EmbeddedPostgres postgres;
        try {
            postgres = EmbeddedPostgres.builder()
                    .setPort(ports.postgres() == 0 ? freePort() : ports.postgres())
                    .setPGStartupWait(Duration.ofSeconds(60))
                    // A throwaway server: durability is not worth an fsync per commit here.
                    .setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off")
                    .setServerConfig("max_connections", "300")
                    // Counts what the server ran, per statement (benchmarks; CREATE EXTENSION pg_stat_statements to read it).
                    .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("embedded Postgres did not start: " + e.getMessage(), e);
        }
        started.add(postgres);

        int redisPort = ports.redis() == 0 ? freePort() : ports.redis();
        RedisServer redis;
        try {
            redis = RedisServer.newRedisServer()
                    .port(redisPort)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .build();
            redis.start();
        } catch (IOException e) {
            throw new IllegalStateException("embedded Redis did not start: " + e.getMessage(), e);
        }
        started.add(redis::stop);

        String sqsEndpoint = startSqs(ports.sqs(), sqsFrontEnd);
        endpoints = new Endpoints(
                postgres.getJdbcUrl("postgres", "postgres"),
                "postgres",
                "postgres",
                "redis://127.0.0.1:" + redisPort,
                sqsEndpoint);
    }

    /** ElasticMQ, and the front end when asked for; returns the SQS endpoint. */
    private String startSqs(int port, boolean frontEnd) {
        LocalSqs sqs = LocalSqs.start("127.0.0.1", port, frontEnd);
        started.add(sqs);
        queues = sqs.queues();
        return sqs.endpoint();
    }

    @Override
    public void close() {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.err.println("embedded server did not stop cleanly: " + e);
            }
        }
        started.clear();
    }

    static int freePort() {
        try (var socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free port: " + e.getMessage(), e);
        }
    }

    private static void ensureFree(String server, int port) {
        if (port == 0) {
            return;
        }
        try (var socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("127.0.0.1", port));
        } catch (BindException e) {
            throw new PortTakenException(server, port);
        } catch (IOException e) {
            throw new IllegalStateException(server + " port " + port + ": " + e.getMessage(), e);
        }
    }
}
