package dev.runner.redis;

import dev.runner.cost.CostTracker;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Redis as Runner uses it: standalone or cluster as {@link Settings} say (ElastiCache Serverless
 * is cluster mode), over TLS for {@code rediss://}, with an AUTH token read at each connect.
 * {@link #run} sends several script calls and reads together, one round trip ({@link ScriptRunner});
 * the connection, its reconnect throttle and what error replies mean are {@link RedisConnection}'s;
 * the URL forms are {@link RedisUrl}'s.
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

    private final RedisConnection connection;
    private final ScriptRunner scripts;
    private final CostTracker costs;
    /** One blocking pop at a time on the blocking connection. */
    private final ReentrantLock popLock = new ReentrantLock();

    private Redis(RedisConnection connection, CostTracker costs) {
        this.connection = connection;
        this.scripts = new ScriptRunner(connection, costs);
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
                throw new IllegalArgumentException("Redis URL must start with redis:// or rediss:// (TLS): " + RedisUrl.redacted(url));
            }
            if (mode == RedisMode.STANDALONE && url.contains(",")) {
                throw new IllegalArgumentException("several seeds need cluster mode: " + RedisUrl.redacted(url));
            }
            if (url.indexOf("://", url.indexOf("://") + 3) >= 0) {
                // rediss://a:1,rediss://b:2 would make a seed of host "rediss": one scheme, then host:port pairs.
                throw new IllegalArgumentException("one scheme for all seeds (rediss://h1:p1,h2:p2): " + RedisUrl.redacted(url));
            }
            if (trustedCertificates != null && !url.startsWith("rediss://")) {
                throw new IllegalArgumentException("trusted certificates are for rediss:// (TLS) only: " + RedisUrl.redacted(url));
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
        return connect(RedisUrl.settings(url, timeout), costs);
    }

    public static Redis connect(Settings settings, CostTracker costs) {
        return new Redis(RedisConnection.of(settings), costs);
    }

    public boolean isCluster() {
        return connection.isCluster();
    }

    /** The seeds as Lettuce got them (TLS, credentials source), for tests. */
    List<RedisURI> seeds() {
        return connection.seeds();
    }

    /**
     * Runs the commands pipelined (one round trip; a second only for scripts Redis no longer has)
     * and returns their replies in order.
     *
     * @throws RedisUnavailableException Redis unreachable, too slow, or unable to serve now
     *         (loading, busy, cluster down, out of memory…: {@link RedisConnection#isOutage})
     * @throws RedisScriptException a script failed (a bug, not an outage), named in the message
     */
    public List<Object> run(List<? extends Command> calls) {
        return scripts.run(calls);
    }

    /** Runs one call. */
    public Object run(Call call) {
        return run(List.of(call)).getFirst();
    }

    public String get(String key) {
        costs.redisRoundTrip(1);
        return connection.await(connection.commands().get(key));
    }

    public void set(String key, String value) {
        costs.redisRoundTrip(1);
        connection.await(connection.commands().set(key, value));
    }

    public void set(String key, String value, Duration ttl) {
        costs.redisRoundTrip(1);
        connection.await(connection.commands().set(key, value, SetArgs.Builder.px(ttl.toMillis())));
    }

    public void delete(String key) {
        costs.redisRoundTrip(1);
        connection.await(connection.commands().del(key));
    }

    public Map<String, String> hashGetAll(String key) {
        costs.redisRoundTrip(1);
        return connection.await(connection.commands().hgetall(key));
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
        long waitMillis = Math.max(10, Math.min(wait.toMillis(), connection.timeout().toMillis() / 2));
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
            StatefulConnection<String, String> blocking = connection.blockingConnection();
            try {
                KeyValue<String, String> popped = connection.await(RedisConnection.async(blocking).blpop(waitMillis / 1000.0, key));
                return popped == null || !popped.hasValue() ? Optional.empty() : Optional.of(popped.getValue());
            } catch (RuntimeException e) {
                connection.closeBlocking(blocking);
                throw e;
            }
        } finally {
            popLock.unlock();
        }
    }

    /** A plain read, pipelined with the rest of a round trip ({@link #run}). */
    public sealed interface Read extends Command {
        String key();

        /** HGETALL: the hash as a map (empty when the key is absent). */
        record Hash(String key) implements Read {}

        /** ZCOUNT over scores in (above, upTo], upTo null = no upper bound: a Long. */
        record Count(String key, long above, Long upTo) implements Read {}

        /** ZRANGE WITHSCORES of the whole set: its scores in order, as a list of Doubles (empty when the key is absent). */
        record Scores(String key) implements Read {}

        /** The highest score of a sorted set, a Double, or null when the set is empty or absent. */
        record Highest(String key) implements Read {}
    }

    /**
     * Opens the connection now if it is not open (a function's init, off the request path); false if Redis
     * cannot be reached now, which the next call retries as usual.
     */
    public boolean open() {
        try {
            connection.commands();
            return true;
        } catch (RedisUnavailableException e) {
            return false;
        }
    }

    /**
     * Closes the connection and keeps the client: the next call connects again. For a SnapStart
     * checkpoint, after which a connection made before it is dead.
     */
    public void disconnect() {
        connection.disconnect();
    }

    @Override
    public void close() {
        connection.close();
    }
}
