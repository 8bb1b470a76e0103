package dev.runner.secrets;

import dev.runner.log.Log;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * One secret as a function holds it: read from its source on first use and kept in memory, then
 * re-read only when asked to ({@link #refresh}), after the credentials it holds were refused, or when
 * it is older than its caller allows ({@link #value(Duration)}). So an
 * RDS-managed secret rotated every 7 days keeps working without a redeploy, and a function that
 * never needs a secret never reads it. Thread-safe.
 */
public final class Secret {

    private static final Log LOG = Log.of(Secret.class);

    private final String id;
    private final SecretSource source;
    private final long minRefreshNanos;
    private final LongSupplier nanoTime;
    private String value;
    private long readAtNanos;

    /**
     * @param minRefreshNanos a refresh within this long of the last read answers from memory: a burst of
     *                        refused logins costs one read, not one per login
     */
    Secret(String id, SecretSource source, long minRefreshNanos, LongSupplier nanoTime) {
        this.id = Objects.requireNonNull(id, "id");
        this.source = Objects.requireNonNull(source, "source");
        this.minRefreshNanos = minRefreshNanos;
        this.nanoTime = nanoTime;
    }

    /** The secret's name or ARN. */
    public String id() {
        return id;
    }

    /** The value, read once. */
    public synchronized String value() {
        if (value == null) {
            readNow();
        }
        return value;
    }

    /**
     * The value, read again when the one in memory is older than {@code maxAge}: for a key that is rotated with no
     * refusal to tell of it (the callback key, whose old and new keys overlap). A re-read that fails keeps the value in
     * memory, to be tried again at the next call.
     */
    public synchronized String value(Duration maxAge) {
        if (value != null && nanoTime.getAsLong() - readAtNanos >= maxAge.toNanos()) {
            try {
                readNow();
            } catch (SecretUnavailableException e) {
                LOG.warn("secret not re-read, keeping the value in memory", "secret", id, "error", e.getMessage());
            }
        }
        return value();
    }

    /**
     * The value as the source has it now, for a caller whose credentials were just refused (a
     * rotation). Re-reads unless the last read is more recent than the minimum interval; if the
     * re-read fails, the value in memory is kept and returned, since it may still be right.
     */
    public synchronized String refresh() {
        if (value != null && nanoTime.getAsLong() - readAtNanos < minRefreshNanos) {
            return value;
        }
        try {
            readNow();
        } catch (SecretUnavailableException e) {
            if (value == null) {
                throw e;
            }
            LOG.warn("secret not refreshed, keeping the value in memory", "secret", id, "error", e.getMessage());
        }
        return value;
    }

    private void readNow() {
        String read = source.read(id);
        if (read == null) {
            throw new SecretUnavailableException("secret " + id + " has no SecretString", null);
        }
        if (value != null && !value.equals(read)) {
            LOG.info("secret changed", "secret", id);
        }
        value = read;
        readAtNanos = nanoTime.getAsLong();
    }

    /** The id only: the value never reaches a log line. */
    @Override
    public String toString() {
        return "Secret[" + id + "]";
    }
}
