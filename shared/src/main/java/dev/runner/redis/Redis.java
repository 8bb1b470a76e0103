package dev.runner.redis;

import dev.runner.cost.CostTracker;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyValue;
import io.lettuce.core.Range;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisCredentialsProvider;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
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
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One Lettuce connection to Redis, standalone or cluster as {@link Settings} say (ElastiCache Serverless
 * is cluster mode), over TLS for {@code rediss://}, with an AUTH token read at each connect.
 * Scripts run with EVALSHA and fall back to EVAL (which also caches the script) on NOSCRIPT, e.g.
 * after a failover. {@link #run} sends several script calls together: one round trip.
 *
 * <p>The connection is opened lazily and re-opened on demand, at most once per {@code timeout}, so
 * a Redis outage costs callers one fast {@link RedisUnavailableException}, not a connect timeout
 * per call. While disconnected, commands are rejected instead of queued.
 */
public final class Redis implements AutoCloseable {

    /** What one round trip can carry: script calls and plain reads, in any mix. */
    public sealed interface Command permits Call, Read {}

    /** One script call: keys and arguments as the script's header lists them. */
    public record Call(Script script, List<String> keys, List<String> args) implements Command {
        public Call {
            Objects.requireNonNull(script, "script");
            keys = List.copyOf(keys);
            args = List.copyOf(args);
            if (keys.size() != script.keyCount()) {
                throw new IllegalArgumentException(script + " takes " + script.keyCount() + " keys: " + keys);
            }
        }
    }

    /** Command and connect timeout unless said otherwise. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);

    /**
     * Makes Lettuce's client (its Netty event loops and Reactor, ~860 classes) at the first connect, not
     * at construction: a function that never calls Redis on its path never pays for it (bench/README.md, cold start).
     */
    private final Supplier<AbstractRedisClient> build;
    private final boolean cluster;
    private AbstractRedisClient client;
    private final List<RedisURI> uris;
    private final CostTracker costs;
    /** Command and connect timeout; also the pause between reconnect attempts. */
    private final Duration timeout;

    private StatefulConnection<String, String> connection;
    private RedisClusterAsyncCommands<String, String> commands;
    /** For blocking pops only, opened on first use: a blocked command must not hold up the shared connection's callers. */
    private StatefulConnection<String, String> blockingConnection;
    /** One blocking pop at a time on that connection. */
    private final ReentrantLock popLock = new ReentrantLock();
    private long nextConnectNanos;

    private Redis(Supplier<AbstractRedisClient> build, boolean cluster, List<RedisURI> uris, Duration timeout, CostTracker costs) {
        this.build = build;
        this.cluster = cluster;
        this.uris = uris;
        this.timeout = timeout;
        this.costs = costs;
    }

    /** Where the AUTH token comes from: asked at each connect (off Lettuce's event loop), so a rotated token reaches the next connection. */
    @FunctionalInterface
    public interface Auth {
        String token();
    }

    /**
     * How to reach Redis, said rather than guessed: the mode, a {@code redis://} or {@code rediss://} (TLS) URL
     * (cluster mode may list several seeds, {@code redis://h1:p1,h2:p2}), and an AUTH token source or null
     * (a password in the URL's user info also works, for development).
     *
     * <p>Over TLS the peer is verified in full: its certificate chain against the JDK's trust store (ElastiCache's
     * certificates chain to Amazon's public roots), or, when {@code trustedCertificates} names a PEM file, against
     * those certificates instead (a private CA); and its host name against the certificate (each seed's {@link RedisURI}
     * keeps Lettuce's default, {@code SslVerifyMode.FULL}). Lettuce bounds a connect, TLS handshake included, by
     * {@code timeout} (the seeds' timeout).
     */
    public record Settings(String url, RedisMode mode, Auth auth, Duration timeout, Path trustedCertificates) {
        public Settings {
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(mode, "mode");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout <= 0: " + timeout);
            }
            if (!url.startsWith("redis://") && !url.startsWith("rediss://")) {
                throw new IllegalArgumentException("Redis URL must start with redis:// or rediss:// (TLS): " + redacted(url));
            }
            if (mode == RedisMode.STANDALONE && url.contains(",")) {
                throw new IllegalArgumentException("several seeds need cluster mode: " + redacted(url));
            }
            if (url.indexOf("://", url.indexOf("://") + 3) >= 0) {
                // rediss://a:1,rediss://b:2 would make a seed of host "rediss": one scheme, then host:port pairs.
                throw new IllegalArgumentException("one scheme for all seeds (rediss://h1:p1,h2:p2): " + redacted(url));
            }
            if (trustedCertificates != null && !url.startsWith("rediss://")) {
                throw new IllegalArgumentException("trusted certificates are for rediss:// (TLS) only: " + redacted(url));
            }
        }

        public Settings(String url, RedisMode mode, Auth auth, Duration timeout) {
            this(url, mode, auth, timeout, null);
        }

        public Settings(String url, RedisMode mode, Auth auth) {
            this(url, mode, auth, DEFAULT_TIMEOUT);
        }

        boolean tls() {
            return url.startsWith("rediss://");
        }
    }

    /**
     * For tests and tools: {@code redis://} and {@code rediss://} are standalone; {@code redis-cluster://h:p[,h:p]}
     * and {@code rediss-cluster://…} name cluster mode in the URL itself (the embedded test cluster's form).
     * Functions use {@link #connect(Settings, CostTracker)}, whose mode is a setting.
     */
    public static Redis connect(String url) {
        return connect(url, DEFAULT_TIMEOUT, CostTracker.NONE);
    }

    public static Redis connect(String url, CostTracker costs) {
        return connect(url, DEFAULT_TIMEOUT, costs);
    }

    public static Redis connect(String url, Duration timeout) {
        return connect(url, timeout, CostTracker.NONE);
    }

    public static Redis connect(String url, Duration timeout, CostTracker costs) {
        Objects.requireNonNull(url, "url");
        int schemeEnd = url.indexOf("://");
        if (schemeEnd < 0) {
            throw new IllegalArgumentException("Redis URL without scheme: " + redacted(url));
        }
        String scheme = url.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        String rest = url.substring(schemeEnd + 3);
        return switch (scheme) {
            case "redis", "rediss" -> connect(new Settings(url, RedisMode.STANDALONE, null, timeout), costs);
            case "redis-cluster", "rediss-cluster" -> connect(new Settings(
                    (scheme.startsWith("rediss") ? "rediss://" : "redis://") + rest, RedisMode.CLUSTER, null, timeout), costs);
            default -> throw new IllegalArgumentException(
                    "unknown Redis scheme " + scheme + " (redis, rediss, redis-cluster, rediss-cluster): " + redacted(url));
        };
    }

    public static Redis connect(Settings settings, CostTracker costs) {
        List<RedisURI> seeds = seeds(settings);
        return switch (settings.mode()) {
            case STANDALONE -> new Redis(() -> {
                RedisClient client = RedisClient.create(seeds.getFirst());
                client.setOptions(options(ClientOptions.builder(), settings).build());
                return client;
            }, false, seeds, settings.timeout(), costs);
            case CLUSTER -> new Redis(() -> {
                RedisClusterClient client = RedisClusterClient.create(seeds);
                client.setOptions(options(ClusterClientOptions.builder(), settings)
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enableAllAdaptiveRefreshTriggers()
                                .build())
                        .build());
                return client;
            }, true, seeds, settings.timeout(), costs);
        };
    }

    /** The options both clients share, set on {@code builder}. */
    private static <B extends ClientOptions.Builder> B options(B builder, Settings settings) {
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

    /** One URI per seed; user info on the first applies to all, an AUTH source replaces it. */
    private static List<RedisURI> seeds(Settings settings) {
        String rest = settings.url().substring(settings.url().indexOf("://") + 3);
        String userInfo = "";
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            userInfo = rest.substring(0, at + 1);
            rest = rest.substring(at + 1);
        }
        RedisCredentialsProvider credentials = settings.auth() == null ? null : credentials(settings.auth());
        List<RedisURI> seeds = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            String seed = hostPort.trim();
            int slash = seed.indexOf('/');
            String database = "";
            if (slash >= 0) {
                database = seed.substring(slash);
                seed = seed.substring(0, slash);
            }
            if (seed.isEmpty()) {
                continue;
            }
            RedisURI uri = RedisURI.create((settings.tls() ? "rediss://" : "redis://") + userInfo + seed
                    + (settings.mode() == RedisMode.STANDALONE ? database : ""));
            uri.setTimeout(settings.timeout());
            if (credentials != null) {
                uri.setCredentialsProvider(credentials);
            }
            seeds.add(uri);
        }
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("Redis URL without a host: " + redacted(settings.url()));
        }
        return List.copyOf(seeds);
    }

    /** The token is read on a worker thread: a secret read must never block Lettuce's event loop. */
    private static RedisCredentialsProvider credentials(Auth auth) {
        return () -> Mono.fromCallable(() -> RedisCredentials.just(null, auth.token()))
                .subscribeOn(Schedulers.boundedElastic());
    }

    private static String redacted(String url) {
        return url.replaceAll("//[^@/]*@", "//***@");
    }

    public boolean isCluster() {
        return cluster;
    }

    /** The seeds as Lettuce got them (TLS, credentials source), for tests. */
    List<RedisURI> seeds() {
        return uris;
    }

    /**
     * Runs the commands pipelined (one round trip; a second only for scripts Redis no longer has)
     * and returns their replies in order.
     *
     * @throws RedisUnavailableException Redis unreachable, too slow, or unable to serve now
     *         (loading, busy, cluster down, out of memory…: {@link #isOutage})
     * @throws RedisScriptException a script failed (a bug, not an outage), named in the message
     */
    public List<Object> run(List<? extends Command> calls) {
        if (calls.isEmpty()) {
            return List.of();
        }
        List<Object> replies = new ArrayList<>(dispatch(calls, false));
        List<Integer> unknown = new ArrayList<>();
        for (int i = 0; i < replies.size(); i++) {
            if (replies.get(i) == NO_SCRIPT) {
                unknown.add(i);
            }
        }
        if (!unknown.isEmpty()) {
            List<Object> reloaded = dispatch(unknown.stream().<Command>map(calls::get).toList(), true);
            for (int i = 0; i < unknown.size(); i++) {
                replies.set(unknown.get(i), reloaded.get(i));
            }
        }
        return replies;
    }

    /** Runs one call. */
    public Object run(Call call) {
        return run(List.of(call)).getFirst();
    }

    public String get(String key) {
        costs.redisRoundTrip(1);
        return await(commands().get(key));
    }

    public void set(String key, String value) {
        costs.redisRoundTrip(1);
        await(commands().set(key, value));
    }

    public void set(String key, String value, Duration ttl) {
        costs.redisRoundTrip(1);
        await(commands().set(key, value, SetArgs.Builder.px(ttl.toMillis())));
    }

    public void delete(String key) {
        costs.redisRoundTrip(1);
        await(commands().del(key));
    }

    public Map<String, String> hashGetAll(String key) {
        costs.redisRoundTrip(1);
        return await(commands().hgetall(key));
    }

    /**
     * Pops the head of a list, waiting for one to be pushed if it is empty (BLPOP), on a connection
     * of its own, one pop at a time (a second BLPOP on that connection would wait behind the first
     * on the server). The wait is cut to half the command timeout: a pop the client gave up on would
     * still hold its connection on the server, so it must end on the server's side first.
     *
     * @return the value popped, or empty when none came within the wait
     * @throws RedisUnavailableException as {@link #run(List)}; the blocking connection is then dropped
     */
    public Optional<String> blockingPop(String key, Duration wait) {
        long waitMillis = Math.max(10, Math.min(wait.toMillis(), timeout.toMillis() / 2));
        try {
            if (!popLock.tryLock(waitMillis, TimeUnit.MILLISECONDS)) {
                return Optional.empty();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
        try {
            costs.redisRoundTrip(1);
            StatefulConnection<String, String> connection = blockingConnection();
            try {
                RedisClusterAsyncCommands<String, String> blocking = connection instanceof StatefulRedisClusterConnection<String, String> cluster
                        ? cluster.async() : ((StatefulRedisConnection<String, String>) connection).async();
                KeyValue<String, String> popped = await(blocking.blpop(waitMillis / 1000.0, key));
                return popped == null || !popped.hasValue() ? Optional.empty() : Optional.of(popped.getValue());
            } catch (RuntimeException e) {
                closeBlocking(connection);
                throw e;
            }
        } finally {
            popLock.unlock();
        }
    }

    /** The blocking connection, opened if need be (under the pop lock, not this object's: a connect may take the whole timeout). */
    private StatefulConnection<String, String> blockingConnection() {
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
            StatefulConnection<String, String> opened = lettuce instanceof RedisClusterClient cluster ? cluster.connect(ExactUtf8.CODEC)
                    : ((RedisClient) lettuce).connect(ExactUtf8.CODEC);
            synchronized (this) {
                blockingConnection = opened;
            }
            return opened;
        } catch (RuntimeException e) {
            synchronized (this) {
                nextConnectNanos = System.nanoTime() + timeout.toNanos();
            }
            throw new RedisUnavailableException("Redis unreachable at " + endpoints() + ": " + why(e), e);
        }
    }

    /** Drops the blocking connection if it is still {@code connection} (a newer one is left alone). */
    private synchronized void closeBlocking(StatefulConnection<String, String> connection) {
        if (blockingConnection == connection) {
            blockingConnection = null;
        }
        connection.closeAsync();
    }

    private synchronized void closeBlocking() {
        if (blockingConnection != null) {
            blockingConnection.closeAsync();
            blockingConnection = null;
        }
    }

    /** Error replies of a server that cannot serve now, though the command is right. */
    private static final List<String> OUTAGE_ERRORS = List.of(
            "LOADING", "BUSY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "NOREPLICAS", "OOM", "MISCONF");

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

    /** A plain read, pipelined with the rest of a round trip ({@link #run}). */
    public sealed interface Read extends Command {
        String key();

        /** HGETALL: the hash as a map (empty when the key is absent). */
        record Hash(String key) implements Read {}

        /** ZCOUNT over scores in (above, upTo], upTo null = no upper bound: a Long. */
        record Count(String key, long above, Long upTo) implements Read {}
    }

    /** Marks a reply of EVALSHA that Redis answered with NOSCRIPT. */
    private static final Object NO_SCRIPT = new Object();

    private List<Object> dispatch(List<? extends Command> calls, boolean sendBody) {
        costs.redisRoundTrip(calls.size());
        List<RedisFuture<?>> futures = new ArrayList<>(calls.size());
        synchronized (this) {
            var commands = commands();
            // Standalone: one flush for all calls. Cluster: Lettuce writes each node's calls without
            // waiting for replies; deferred flushing is left off there because a node connection
            // opened during the batch would miss the flush.
            boolean batch = !isCluster();
            if (batch) {
                connection.setAutoFlushCommands(false);
            }
            try {
                for (Command command : calls) {
                    futures.add(switch (command) {
                        case Call call -> sendBody
                                ? commands.eval(call.script().body(), ScriptOutputType.MULTI, keys(call), args(call))
                                : commands.evalsha(call.script().sha(), ScriptOutputType.MULTI, keys(call), args(call));
                        case Read.Hash hash -> commands.hgetall(hash.key());
                        case Read.Count count -> commands.zcount(count.key(), Range.from(Range.Boundary.excluding((double) count.above()),
                                count.upTo() == null ? Range.Boundary.unbounded() : Range.Boundary.including((double) count.upTo())));
                    });
                }
                if (batch) {
                    connection.flushCommands();
                }
            } finally {
                if (batch) {
                    connection.setAutoFlushCommands(true);
                }
            }
        }
        List<Object> replies = new ArrayList<>(futures.size());
        for (int i = 0; i < futures.size(); i++) {
            try {
                replies.add(await(futures.get(i)));
            } catch (RedisNoScriptException e) {
                replies.add(NO_SCRIPT);
            } catch (RedisCommandExecutionException e) {
                if (calls.get(i) instanceof Call call) {
                    throw new RedisScriptException(call.script(), e);
                }
                throw e;
            }
        }
        return replies;
    }

    private static String[] keys(Call call) {
        return call.keys().toArray(String[]::new);
    }

    private static String[] args(Call call) {
        return call.args().toArray(String[]::new);
    }

    private <T> T await(RedisFuture<T> future) {
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

    private synchronized RedisClusterAsyncCommands<String, String> commands() {
        if (commands != null) {
            return commands;
        }
        long now = System.nanoTime();
        if (now - nextConnectNanos < 0) {
            throw new RedisUnavailableException("Redis unreachable; next connect attempt within " + timeout, null);
        }
        try {
            AbstractRedisClient lettuce = client();
            if (lettuce instanceof RedisClusterClient cluster) {
                StatefulRedisClusterConnection<String, String> clusterConnection = cluster.connect(ExactUtf8.CODEC);
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
            throw new RedisUnavailableException("Redis unreachable at " + endpoints() + ": " + why(e), e);
        }
    }

    /** Lettuce's client, made on first use; every connection is opened through it. */
    private synchronized AbstractRedisClient client() {
        if (client == null) {
            client = build.get();
        }
        return client;
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

    /** host:port of the seeds, never the credentials. */
    private String endpoints() {
        return uris.stream().map(uri -> uri.getHost() + ":" + uri.getPort()).toList().toString();
    }

    /**
     * Opens the connection now if it is not open (a function's init, off the request path); false if Redis
     * cannot be reached now, which the next call retries as usual.
     */
    public boolean open() {
        try {
            commands();
            return true;
        } catch (RedisUnavailableException e) {
            return false;
        }
    }

    /**
     * Closes the connection and keeps the client: the next call connects again. For a SnapStart
     * checkpoint, after which a connection made before it is dead.
     */
    public synchronized void disconnect() {
        if (connection != null) {
            connection.close();
        }
        closeBlocking();
        connection = null;
        commands = null;
        nextConnectNanos = 0;
    }

    @Override
    public synchronized void close() {
        if (connection != null) {
            connection.close();
        }
        closeBlocking();
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * UTF-8, as Lettuce's own string codec, but with each key's and argument's encoded length computed
     * exactly: Lettuce then writes them straight into the command's buffer. With an estimate only, it
     * encodes every argument into a temporary pooled buffer and copies it, a noticeable share of the
     * event loop's work for script calls with dozens of arguments. A holder, so Lettuce's codec classes
     * load with the first connection, not with this class.
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
