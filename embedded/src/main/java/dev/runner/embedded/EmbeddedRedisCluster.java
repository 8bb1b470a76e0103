package dev.runner.embedded;

import redis.embedded.RedisServer;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of three masters (no replicas) in this JVM, for the tests that must hold in
 * cluster mode (ElastiCache Serverless is one). The nodes are joined with CLUSTER MEET and
 * ADDSLOTS over plain RESP, so this module needs no Redis client. {@link #url()} is the seed list
 * in the {@code redis-cluster://h:p,h:p,h:p} form {@code dev.runner.redis.Redis} reads.
 *
 * <p>{@link #startTls} makes one that speaks TLS only (ElastiCache Serverless's kind), between its nodes
 * too, with the server certificate for 127.0.0.1 of the {@link TlsCertificates} given.
 */
public final class EmbeddedRedisCluster implements AutoCloseable {

    private static final int SLOTS = 16384;
    private static final int MASTERS = 3;
    private static final Duration READY_WITHIN = Duration.ofSeconds(30);

    private static EmbeddedRedisCluster shared;

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();
    /** Null: plain TCP. */
    private final TlsCertificates tls;

    private EmbeddedRedisCluster(TlsCertificates tls) {
        this.tls = tls;
    }

    /** One cluster per JVM, stopped at exit. */
    public static synchronized EmbeddedRedisCluster shared() {
        if (shared == null) {
            shared = start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close, "embedded-redis-cluster-stop"));
        }
        return shared;
    }

    public static EmbeddedRedisCluster start() {
        return start(null);
    }

    /** Nodes with no plain port; the caller closes it, and the certificates after it. */
    public static EmbeddedRedisCluster startTls(TlsCertificates certificates) {
        return start(Objects.requireNonNull(certificates, "certificates"));
    }

    private static EmbeddedRedisCluster start(TlsCertificates tls) {
        var cluster = new EmbeddedRedisCluster(tls);
        try {
            cluster.startNodes();
            cluster.join();
            return cluster;
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw new IllegalStateException("embedded Redis Cluster did not start: " + e.getMessage(), e);
        }
    }

    /** {@code redis-cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3}, {@code rediss-cluster://…} for TLS */
    public String url() {
        return (tls == null ? "redis-cluster://" : "rediss-cluster://") + ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    public List<Integer> ports() {
        return List.copyOf(ports);
    }

    private void startNodes() throws IOException {
        Path dir = Files.createTempDirectory("runner-redis-cluster");
        for (int i = 0; i < MASTERS; i++) {
            int port = EmbeddedServers.freePort();
            var builder = RedisServer.newRedisServer()
                    .port(tls == null ? port : 0)
                    .bind("127.0.0.1")
                    .setting("cluster-enabled yes")
                    .setting("cluster-config-file " + dir.resolve("nodes-" + port + ".conf"))
                    .setting("cluster-node-timeout 5000")
                    .setting("save \"\"")
                    .setting("appendonly no");
            if (tls != null) {
                // The cluster bus (port + 10000) speaks TLS too, and nodes announce their TLS port.
                tls.redisSettings(port, tls.loopback()).forEach(builder::setting);
                builder.setting("tls-cluster yes");
            }
            RedisServer server = builder.build();
            server.start();
            servers.add(server);
            ports.add(port);
        }
    }

    private void join() throws IOException {
        int first = ports.getFirst();
        for (int i = 0; i < MASTERS; i++) {
            int from = i * SLOTS / MASTERS;
            int to = (i + 1) * SLOTS / MASTERS - 1;
            List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = from; slot <= to; slot++) {
                command.add(Integer.toString(slot));
            }
            call(ports.get(i), command);
        }
        for (int port : ports.subList(1, ports.size())) {
            call(first, List.of("CLUSTER", "MEET", "127.0.0.1", Integer.toString(port)));
        }
        long deadline = System.nanoTime() + READY_WITHIN.toNanos();
        while (!allReady()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cluster_state not ok within " + READY_WITHIN);
            }
            // Polling a server's gossip: no event to await.
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the cluster formed", e);
            }
        }
    }

    /** Every node sees state ok and all the others: a client's first topology read is complete. */
    private boolean allReady() throws IOException {
        for (int port : ports) {
            String info = (String) call(port, List.of("CLUSTER", "INFO"));
            if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + MASTERS)) {
                return false;
            }
        }
        return true;
    }

    /** One RESP command on a fresh connection; returns a String, Long or List, throws on an error reply. */
    private Object call(int port, List<String> command) throws IOException {
        try (Socket socket = tls == null ? new Socket(InetAddress.getLoopbackAddress(), port) : tls.connect(port)) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            var request = new ByteArrayOutputStream();
            request.writeBytes(("*" + command.size() + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (String part : command) {
                byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
                request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                request.writeBytes(bytes);
                request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
            }
            out.write(request.toByteArray());
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        return switch (type) {
            case '+' -> line;
            case '-' -> throw new IOException("Redis error: " + line);
            case ':' -> Long.parseLong(line);
            case '$' -> {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    yield null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                yield new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*' -> {
                int count = Integer.parseInt(line);
                List<Object> items = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                yield items;
            }
            default -> throw new IOException("unexpected RESP type: " + (char) type);
        };
    }

    private static String line(InputStream in) throws IOException {
        var bytes = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\r') {
            if (b < 0) {
                throw new IOException("connection closed mid-reply");
            }
            bytes.write(b);
        }
        in.read();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        for (int i = servers.size() - 1; i >= 0; i--) {
            try {
                servers.get(i).stop();
            } catch (IOException | RuntimeException e) {
                System.err.println("embedded Redis Cluster node did not stop cleanly: " + e);
            }
        }
        servers.clear();
    }
}
