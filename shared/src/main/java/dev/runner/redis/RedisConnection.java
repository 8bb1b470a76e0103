package dev.runner.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.netty.buffer.ByteBufUtil;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Lettuce connection to Redis, standalone or cluster, and what its replies mean. It is opened
 * lazily and re-opened on demand, at most once per {@code timeout}, so a Redis outage costs callers
 * one fast {@link RedisUnavailableException}, not a connect timeout per call. While disconnected,
 * commands are rejected instead of queued. Blocking pops get a connection of their own, opened on
 * first use: a blocked command must not hold up the shared connection's callers.
 */
final class RedisConnection {

    /** Error replies of a server that cannot serve now, though the command is right. */
    private static final List<String> OUTAGE_ERRORS = List.of(
            "LOADING", "BUSY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "NOREPLICAS", "OOM", "MISCONF");

    /**
     * Makes Lettuce's client (its Netty event loops and Reactor) at the first connect, not at
     * construction: a function that never calls Redis on its path never loads it.
     */
    private final Supplier<AbstractRedisClient> build;
    private final boolean cluster;
    private final List<RedisURI> seeds;
    /** Command and connect timeout; also the pause between connect attempts. */
    private final Duration timeout;

    private AbstractRedisClient client;
    private StatefulConnection<String, String> connection;
    private RedisClusterAsyncCommands<String, String> commands;
    private StatefulConnection<String, String> blockingConnection;
    private long nextConnectNanos;

    private RedisConnection(Supplier<AbstractRedisClient> build, boolean cluster, List<RedisURI> seeds, Duration timeout) {
        this.build = build;
        this.cluster = cluster;
        this.seeds = seeds;
        this.timeout = timeout;
    }

    static RedisConnection of(Redis.Settings settings) {
        List<RedisURI> seeds = RedisUrl.seeds(settings);
        return switch (settings.mode()) {
            case STANDALONE -> new RedisConnection(() -> {
                RedisClient client = RedisClient.create(seeds.getFirst());
                client.setOptions(options(ClientOptions.builder(), settings).build());
                return client;
            }, false, seeds, settings.timeout());
            case CLUSTER -> new RedisConnection(() -> {
                RedisClusterClient client = RedisClusterClient.create(seeds);
                client.setOptions(options(ClusterClientOptions.builder(), settings)
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers()
                                .build())
                        .build());
                return client;
            }, true, seeds, settings.timeout());
        };
    }

    /** The options both clients share, set on {@code builder}. */
    private static <B extends ClientOptions.Builder> B options(B builder, Redis.Settings settings) {
        builder.socketOptions(SocketOptions.builder().connectTimeout(settings.timeout()).build())
                // No timeout per command at Lettuce: each one would be a timer task scheduled and cancelled (and a
                // timer thread ticking in every client) for what await() already bounds, cancelling the command.
                .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
        if (settings.trustedCertificates() != null) {
            // Only then: the JDK's roots are Lettuce's default, and redis:// never needs these classes.
            builder.sslOptions(SslOptions.builder().jdkSslProvider().trustManager(settings.trustedCertificates().toFile()).build());
        }
        return builder;
    }

    boolean isCluster() {
        return cluster;
    }

    List<RedisURI> seeds() {
        return seeds;
    }

    Duration timeout() {
        return timeout;
    }

    /**
     * Sends what {@code send} writes on the shared connection together. Standalone: one flush for
     * all. Cluster: Lettuce writes each node's commands without waiting for replies; deferred
     * flushing is left off there because a node connection opened meanwhile would miss the flush.
     */
    synchronized List<RedisFuture<?>> pipelined(Function<RedisClusterAsyncCommands<String, String>, List<RedisFuture<?>>> send) {
        var commands = commands();
        boolean batch = !cluster;
        if (batch) {
            connection.setAutoFlushCommands(false);
        }
        try {
            List<RedisFuture<?>> futures = send.apply(commands);
            if (batch) {
                connection.flushCommands();
            }
            return futures;
        } finally {
            if (batch) {
                connection.setAutoFlushCommands(true);
            }
        }
    }

    /** The shared connection's commands, connecting if need be. */
    synchronized RedisClusterAsyncCommands<String, String> commands() {
        if (commands != null) {
            return commands;
        }
        long now = System.nanoTime();
        if (now - nextConnectNanos < 0) {
            throw new RedisUnavailableException("Redis unreachable; next connect attempt within " + timeout, null);
        }
        try {
            AbstractRedisClient lettuce = client();
            if (lettuce instanceof RedisClusterClient clusterClient) {
                StatefulRedisClusterConnection<String, String> clusterConnection = clusterClient.connect(ExactUtf8.CODEC);
                connection = clusterConnection;
                commands = clusterConnection.async();
            } else {
                StatefulRedisConnection<String, String> single = ((RedisClient) lettuce).connect(ExactUtf8.CODEC);
                connection = single;
                commands = single.async();
            }
            return commands;
        } catch (RuntimeException e) {
            nextConnectNanos = now + timeout.toNanos();
            throw unreachable(e);
        }
    }

    /**
     * The blocking connection's commands, opening it if need be (the caller serialises the pops:
     * not under this object's lock, as a connect may take the whole timeout).
     */
    StatefulConnection<String, String> blockingConnection() {
        StatefulConnection<String, String> current;
        synchronized (this) {
            current = blockingConnection;
            if (current == null && System.nanoTime() - nextConnectNanos < 0) {
                throw new RedisUnavailableException("Redis unreachable; next connect attempt within " + timeout, null);
            }
        }
        if (current != null) {
            return current;
        }
        try {
            AbstractRedisClient lettuce = client();
            StatefulConnection<String, String> opened = lettuce instanceof RedisClusterClient clusterClient
                    ? clusterClient.connect(ExactUtf8.CODEC) : ((RedisClient) lettuce).connect(ExactUtf8.CODEC);
            synchronized (this) {
                blockingConnection = opened;
            }
            return opened;
        } catch (RuntimeException e) {
            synchronized (this) {
                nextConnectNanos = System.nanoTime() + timeout.toNanos();
            }
            throw unreachable(e);
        }
    }

    static RedisClusterAsyncCommands<String, String> async(StatefulConnection<String, String> connection) {
        return connection instanceof StatefulRedisClusterConnection<String, String> clusterConnection
                ? clusterConnection.async() : ((StatefulRedisConnection<String, String>) connection).async();
    }

    /** Drops the blocking connection if it is still {@code connection} (a newer one is left alone). */
    synchronized void closeBlocking(StatefulConnection<String, String> connection) {
        if (blockingConnection == connection) {
            blockingConnection = null;
        }
        connection.closeAsync();
    }

    /**
     * The reply, within the timeout.
     *
     * @throws RedisNoScriptException as Redis said it, for the script runner to load the script
     * @throws RedisCommandExecutionException a command failed (a bug, not an outage)
     * @throws RedisUnavailableException Redis unreachable, too slow, or unable to serve now
     */
    <T> T await(RedisFuture<T> future) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisUnavailableException("interrupted waiting for Redis", e);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new RedisUnavailableException("Redis did not answer within " + timeout, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RedisNoScriptException noScript) {
                throw noScript;
            }
            if (cause instanceof RedisCommandExecutionException failed) {
                if (isOutage(failed.getMessage())) {
                    throw new RedisUnavailableException("Redis cannot serve now: " + failed.getMessage(), failed);
                }
                throw failed;
            }
            throw new RedisUnavailableException("Redis call failed: " + cause, cause);
        }
    }

    /**
     * Whether an error reply says the server cannot serve now (an outage: the caller's fallback
     * applies) rather than that the call is wrong (a bug: a script error, a wrong type).
     */
    static boolean isOutage(String errorReply) {
        if (errorReply == null) {
            return false;
        }
        int end = errorReply.indexOf(' ');
        return OUTAGE_ERRORS.contains(end < 0 ? errorReply : errorReply.substring(0, end));
    }

    /** Lettuce's client, made on first use; every connection is opened through it. */
    private synchronized AbstractRedisClient client() {
        if (client == null) {
            client = build.get();
        }
        return client;
    }

    private RedisUnavailableException unreachable(RuntimeException e) {
        return new RedisUnavailableException("Redis unreachable at " + RedisUrl.endpoints(seeds) + ": " + why(e), e);
    }

    /**
     * Lettuce's message names the address only; the innermost cause says why: refused, timed out, a certificate
     * not trusted or for another host, AUTH refused (Redis's error replies hold no secret).
     */
    private static String why(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? e.getMessage() : e.getMessage() + " (" + root + ")";
    }

    /** Closes the connections and keeps the client: the next call connects again at once. */
    synchronized void disconnect() {
        closeConnections();
        nextConnectNanos = 0;
    }

    synchronized void close() {
        closeConnections();
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private void closeConnections() {
        if (connection != null) {
            connection.close();
        }
        if (blockingConnection != null) {
            blockingConnection.closeAsync();
            blockingConnection = null;
        }
        connection = null;
        commands = null;
    }

    /**
     * UTF-8, as Lettuce's own string codec, but with each key's and argument's encoded length computed
     * exactly: Lettuce then writes them straight into the command's buffer. With an estimate only, it
     * encodes every argument into a temporary pooled buffer and copies it, work the event loop does for
     * every argument of every script call. A holder, so Lettuce's codec classes load with the first
     * connection, not with this class.
     */
    private static final class ExactUtf8 {
        static final StringCodec CODEC = new StringCodec(StandardCharsets.UTF_8) {
            @Override
            public boolean isEstimateExact() {
                return true;
            }

            /** What {@code ByteBufUtil.writeUtf8}, which this codec encodes with, writes: to the byte. */
            @Override
            public int estimateSize(Object keyOrValue) {
                return keyOrValue == null ? 0 : ByteBufUtil.utf8Bytes((CharSequence) keyOrValue);
            }
        };
    }
}
