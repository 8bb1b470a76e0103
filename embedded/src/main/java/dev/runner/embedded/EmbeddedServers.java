package dev.runner.embedded;

import dev.runner.embedded.sqs.ElasticMqQueues;
import dev.runner.embedded.sqs.LocalSqs;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Postgres, Redis and an SQS-compatible server (ElasticMQ) started in this JVM: what the test
 * harness and the local runtime stand on. Each server binds to 127.0.0.1 only; port 0 picks a
 * free port. {@link #close()} stops all of them, in reverse order of start.
 *
 * <p>ElasticMQ's queues can also be reached in-process ({@link #queues()}); with the SQS front end
 * the SQS endpoint answers a queue's everyday requests from them ({@link LocalSqs}).
 *
 * <p>Postgres and Redis can be restarted on their port while clients use them ({@link #restartPostgres},
 * {@link #restartRedis}): the faults the fault run injects. Postgres keeps its data across a restart
 * (its data directory is this class's, deleted at {@link #close()}); Redis comes back empty, as a
 * replaced cache node does.
 */
public final class EmbeddedServers implements AutoCloseable {

    /** The superuser's password: ignored while Postgres trusts local logins, required once a runtime sets it. */
    public static final String SUPERUSER_PASSWORD = "postgres";

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

    /** How long a stop may take: pg_ctl's own wait, with room. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    private final List<AutoCloseable> started = new ArrayList<>();
    private Endpoints endpoints;
    private ElasticMqQueues queues;
    private dev.runner.embedded.sqs.SqsFrontEnd sqsFrontEnd;
    private Path postgresData;
    private int postgresPort;
    private EmbeddedPostgres postgres;
    private TlsCertificates postgresCertificates;
    private RedisServer redis;
    private boolean durable;

    private EmbeddedServers() {}

    /** ElasticMQ answers every SQS request itself. */
    public static EmbeddedServers start(Ports ports) {
        return start(ports, false);
    }

    /** @param sqsFrontEnd whether the SQS endpoint is the front end (the local runtime) or ElasticMQ's REST server itself */
    public static EmbeddedServers start(Ports ports, boolean sqsFrontEnd) {
        return start(ports, sqsFrontEnd, false);
    }

    /**
     * @param durable whether Postgres commits as durably as Aurora does (fsync, synchronous_commit and full_page_writes
     *                on: what the benchmarks measure), or as a throwaway server (all three off: what the tests run on)
     */
    public static EmbeddedServers start(Ports ports, boolean sqsFrontEnd, boolean durable) {
        var servers = new EmbeddedServers();
        servers.durable = durable;
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

    /** The JDBC parameters that verify this Postgres's certificate and host name against the test CA. */
    public String postgresTls() {
        return "sslmode=verify-full&sslrootcert=" + postgresCertificates.caFile();
    }

    /** Postgres refuses a key file others may read. */
    private static Path privateKeyFile(Path keyFile) {
        try {
            Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
            return keyFile;
        } catch (IOException e) {
            throw new UncheckedIOException("the Postgres key file's permissions: " + e.getMessage(), e);
        }
    }

    /** The SQS front end every HTTP request reaches, when the servers were started with one. */
    public java.util.Optional<dev.runner.embedded.sqs.SqsFrontEnd> sqsFrontEnd() {
        return java.util.Optional.ofNullable(sqsFrontEnd);
    }

    /** ElasticMQ's queues in-process: what the local runtime's event source mappings poll. */
    public ElasticMqQueues queues() {
        return queues;
    }

    private void startAll(Ports ports, boolean sqsFrontEnd) {
        ensureFree("postgres", ports.postgres());
        ensureFree("redis", ports.redis());
        ensureFree("sqs", ports.sqs());

        postgresPort = ports.postgres() == 0 ? freePort() : ports.postgres();
        try {
            // Made here rather than by the library, so a restart finds the data again; deleted at close.
            postgresData = Files.createTempDirectory("epg");
        } catch (IOException e) {
            throw new IllegalStateException("no directory for embedded Postgres: " + e.getMessage(), e);
        }
        started.add(this::deletePostgresData);
        postgresCertificates = TlsCertificates.create();
        started.add(postgresCertificates);
        postgres = startPostgres();
        started.add(() -> postgres.close());

        int redisPort = ports.redis() == 0 ? freePort() : ports.redis();
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
        started.add(() -> redis.stop());

        String sqsEndpoint = startSqs(ports.sqs(), sqsFrontEnd);
        endpoints = new Endpoints(
                "jdbc:postgresql://127.0.0.1:" + postgresPort + "/postgres?user=postgres&" + postgresTls(),
                "postgres",
                SUPERUSER_PASSWORD,
                "redis://127.0.0.1:" + redisPort,
                sqsEndpoint);
    }

    /** ElasticMQ, and the front end when asked for; returns the SQS endpoint. */
    private String startSqs(int port, boolean frontEnd) {
        LocalSqs sqs = LocalSqs.start("127.0.0.1", port, frontEnd);
        started.add(sqs);
        queues = sqs.queues();
        sqsFrontEnd = sqs.frontEnd();
        return sqs.endpoint();
    }

    /** Starts Postgres on its port over its data directory: initdb only when the directory is new. */
    private EmbeddedPostgres startPostgres() {
        try {
            return EmbeddedPostgres.builder()
                    .setPort(postgresPort)
                    .setDataDirectory(postgresData)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(60))
                    // A throwaway server: durability is not worth an fsync per commit here. A restart
                    // is a clean shutdown (a checkpoint), so it loses no committed row all the same.
                    // Durable: as Aurora commits, so that what a benchmark measures pays what a commit costs there.
                    .setServerConfig("fsync", durable ? "on" : "off")
                    .setServerConfig("synchronous_commit", durable ? "on" : "off")
                    .setServerConfig("full_page_writes", durable ? "on" : "off")
                    .setServerConfig("max_connections", "300")
                    // Counts what the server ran, per statement (benchmarks; CREATE EXTENSION pg_stat_statements to read it).
                    .setServerConfig("shared_preload_libraries", "pg_stat_statements")
                    // TLS with a certificate for 127.0.0.1 from the test CA: clients verify the server
                    // (sslmode=verify-full) as they verify RDS, rather than trusting any certificate.
                    .setServerConfig("ssl", "on")
                    .setServerConfig("ssl_cert_file", postgresCertificates.loopback().certificateFile().toString())
                    .setServerConfig("ssl_key_file", privateKeyFile(postgresCertificates.loopback().keyFile()).toString())
                    // The readiness check logs in over TCP: once a runtime makes logins prove their
                    // password (the local runtime does, as RDS would), a restart must present it.
                    .setConnectConfig("password", SUPERUSER_PASSWORD)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException("embedded Postgres did not start: " + e.getMessage(), e);
        }
    }

    /**
     * Stops Postgres (a fast shutdown: sessions are cut, as in a failover), keeps it down for
     * {@code down}, and starts it again on the same port with the same data. Returns once it takes
     * connections again.
     */
    public synchronized void restartPostgres(Duration down) {
        requireStarted();
        try {
            postgres.close();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded Postgres did not stop: " + e.getMessage(), e);
        }
        stayDown(down);
        postgres = startPostgres();
    }

    /**
     * Stops Redis, keeps it down for {@code down}, and starts it again on the same port, empty (no
     * persistence: what a replaced cache node looks like). Returns once it takes connections again.
     */
    public synchronized void restartRedis(Duration down) {
        requireStarted();
        try {
            redis.stop();
            stayDown(down);
            redis.start();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded Redis did not restart: " + e.getMessage(), e);
        }
    }

    private void requireStarted() {
        if (endpoints == null || started.isEmpty()) {
            throw new IllegalStateException("the embedded servers are not running");
        }
    }

    /** The outage itself: how long the server stays away is the fault, not a wait for something. */
    private static void stayDown(Duration down) {
        if (down.isNegative()) {
            throw new IllegalArgumentException("down < 0: " + down);
        }
        try {
            Thread.sleep(down);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while a server was down", e);
        }
    }

    /**
     * Deletes the data directory once Postgres has left it. At JVM exit the library's own stop hook
     * may still be stopping the server when this runs: its pid file goes last, so this waits for
     * it, and leaves the directory rather than pull it from under a server that is still running.
     */
    private void deletePostgresData() throws IOException {
        if (postgresData == null || !Files.exists(postgresData)) {
            return;
        }
        Path pidFile = postgresData.resolve("postmaster.pid");
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        while (Files.exists(pidFile) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (Files.exists(pidFile)) {
            throw new IOException("Postgres has not left " + postgresData + "; the directory is kept");
        }
        try (Stream<Path> paths = Files.walk(postgresData)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    @Override
    public synchronized void close() {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.err.println("embedded server did not stop cleanly: " + e);
            }
        }
        started.clear();
    }

    /** A loopback port free now (not reserved: bind it soon). */
    public static int freePort() {
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
