package dev.runner.functions.telemetry;

import dev.runner.metrics.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * The {@link Metrics} the functions give their Runner: what the core reports is added to the
 * recording of the invocation running on the reporting thread (or on the thread that started it,
 * see {@link InvocationLocal}) and published once, when the invocation ends: one EMF record per
 * dimension set, whatever the item count. Reports made outside an invocation are dropped.
 */
public final class InvocationMetrics implements Metrics {

    /** The one instance: a recording is found by thread, not by instance. */
    public static final InvocationMetrics INSTANCE = new InvocationMetrics();

    private static final Logger log = LoggerFactory.getLogger(InvocationMetrics.class);
    /**
     * CloudWatch EMF on stdout, which Lambda sends to CloudWatch Logs, written by Powertools. Here, not on
     * {@link MetricsPublisher}: an interface with a default method is initialised with its implementations,
     * and a constant there holding one would make two threads loading both wait on each other.
     */
    public static final MetricsPublisher EMF_ON_STDOUT = new PowertoolsMetricsPublisher();

    private static volatile MetricsPublisher publisher = EMF_ON_STDOUT;

    private final InvocationLocal<MetricsRecording> recordings = new InvocationLocal<>();

    private InvocationMetrics() {}

    /** Where every invocation's records go from now on (EMF on stdout unless told otherwise): the local runtime, tests. */
    public static void publishTo(MetricsPublisher replacement) {
        publisher = Objects.requireNonNull(replacement, "publisher");
    }

    /** Readies the publisher before the first invocation publishes ({@link MetricsPublisher#prime}); for a function's init. */
    public static void primePublisher() {
        publisher.prime();
    }

    /** A started recording; closing it publishes what the invocation reported. */
    public final class Recording implements AutoCloseable {
        private final MetricsRecording recording = new MetricsRecording();
        private final String function;
        private final String requestId;
        private final boolean coldStart;

        private Recording(String function, String requestId, boolean coldStart) {
            this.function = function;
            this.requestId = requestId;
            this.coldStart = coldStart;
        }

        /** Publishes; a publisher that fails costs the metrics of this invocation, never the invocation. */
        @Override
        public void close() {
            recordings.set(null);
            List<MetricRecord> records = recording.records(function, requestId, coldStart);
            if (records.isEmpty()) {
                return;
            }
            try {
                publisher.publish(records);
            } catch (RuntimeException e) {
                log.warn("metrics of this invocation not published: {}", e.toString());
            }
        }
    }

    /** Starts recording the invocation this thread runs, of {@code function} (the Function dimension). */
    public Recording start(String function, String requestId, boolean coldStart) {
        Recording recording = new Recording(Objects.requireNonNull(function, "function"), requestId, coldStart);
        recordings.set(recording.recording);
        return recording;
    }

    private Metrics current() {
        MetricsRecording recording = recordings.get();
        return recording == null ? Metrics.NONE : recording;
    }

    @Override
    public void itemsSettled(ItemBatch batch) {
        current().itemsSettled(batch);
    }

    @Override
    public void itemsSuperseded(int count, Set<String> tenantIds) {
        current().itemsSuperseded(count, tenantIds);
    }

    @Override
    public void itemsDead(int count, Set<String> tenantIds) {
        current().itemsDead(count, tenantIds);
    }

    @Override
    public void handlerCall(String integrationKey, String handlerKey, Duration latency, boolean failed) {
        current().handlerCall(integrationKey, handlerKey, latency, failed);
    }

    @Override
    public void breakerOpened(String integrationKey) {
        current().breakerOpened(integrationKey);
    }

    @Override
    public void breakerClosed(String integrationKey) {
        current().breakerClosed(integrationKey);
    }

    @Override
    public void tenantBreakerOpened(String integrationKey, String tenantId) {
        current().tenantBreakerOpened(integrationKey, tenantId);
    }

    @Override
    public void tenantBreakerClosed(String integrationKey, String tenantId) {
        current().tenantBreakerClosed(integrationKey, tenantId);
    }

    @Override
    public void breakerOpen(String integrationKey) {
        current().breakerOpen(integrationKey);
    }

    @Override
    public void adaptiveLimit(String integrationKey, String handlerKey, String tenantId, String change) {
        current().adaptiveLimit(integrationKey, handlerKey, tenantId, change);
    }

    @Override
    public void itemsHeld(String tenantId, int count) {
        current().itemsHeld(tenantId, count);
    }

    @Override
    public void tenantWindowDeferrals(String tenantId, int count) {
        current().tenantWindowDeferrals(tenantId, count);
    }

    @Override
    public void redisFailOpen(String operation) {
        current().redisFailOpen(operation);
    }

    @Override
    public void runCompleted(UUID runId, String tenantId, Duration duration) {
        current().runCompleted(runId, tenantId, duration);
    }
}
