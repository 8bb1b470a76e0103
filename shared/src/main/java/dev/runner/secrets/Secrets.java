package dev.runner.secrets;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/** The secrets of one execution environment, each a {@link Secret} read on first use and kept. */
public final class Secrets implements AutoCloseable {

    /** How soon a refused credential may cause another read of the same secret. */
    public static final Duration DEFAULT_MIN_REFRESH = Duration.ofSeconds(1);

    private final SecretSource source;
    private final long minRefreshNanos;
    private final LongSupplier nanoTime;
    private final Map<String, Secret> byId = new ConcurrentHashMap<>();

    public Secrets(SecretSource source, Duration minRefresh, LongSupplier nanoTime) {
        if (minRefresh.isNegative()) {
            throw new IllegalArgumentException("minRefresh < 0: " + minRefresh);
        }
        this.source = source;
        this.minRefreshNanos = minRefresh.toNanos();
        this.nanoTime = nanoTime;
    }

    public Secrets(SecretSource source) {
        this(source, DEFAULT_MIN_REFRESH, System::nanoTime);
    }

    /** The secret of this name or ARN; nothing is read until its value is asked for. */
    public Secret secret(String id) {
        return byId.computeIfAbsent(id, key -> new Secret(key, source, minRefreshNanos, nanoTime));
    }

    @Override
    public void close() {
        if (source instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing the secrets client", e);
            }
        }
    }
}
