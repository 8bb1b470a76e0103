package dev.runner.functions.telemetry;

import dev.runner.functions.telemetry.MetricRecord.Metric;
import dev.runner.metrics.Metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One invocation's metrics, added up as the core reports them (from any thread), then turned into
 * records by dimension set, as docs/metrics.md lists them: one record with dimension
 * {@code Function}, one per {@code Reason} of the deferrals, one per {@code IntegrationKey} of the
 * handler calls and breakers. A metric with nothing to count is left out: nothing happened, nothing is published.
 */
final class MetricsRecording implements Metrics {

    static final String NAMESPACE = "Runner";
    static final String FUNCTION = "Function";
    static final String REASON = "Reason";
    static final String INTEGRATION_KEY = "IntegrationKey";
    static final String COUNT = "Count";
    static final String MILLISECONDS = "Milliseconds";
    /** The property that ties a record to its invocation's log lines (as Powertools names it). */
    static final String REQUEST_ID = "function_request_id";
    /** Most tenants (and runs) a record lists: enough to search for one, bounded in size. */
    static final int MAX_LISTED = 50;

    private static final List<List<String>> BY_FUNCTION = List.of(List.of(FUNCTION));
    private static final List<List<String>> BY_REASON = List.of(List.of(FUNCTION, REASON));
    private static final List<List<String>> BY_INTEGRATION = List.of(List.of(FUNCTION, INTEGRATION_KEY));
    /** BreakerOpen is also summed over integrations, for the "open too long" alarm. */
    private static final List<List<String>> BY_FUNCTION_AND_INTEGRATION = List.of(List.of(FUNCTION), List.of(FUNCTION, INTEGRATION_KEY));

    private final AtomicInteger succeeded = new AtomicInteger();
    private final AtomicInteger retried = new AtomicInteger();
    private final AtomicInteger parked = new AtomicInteger();
    private final AtomicInteger dead = new AtomicInteger();
    private final AtomicInteger superseded = new AtomicInteger();
    private final AtomicInteger tenantWindowDeferrals = new AtomicInteger();
    private final AtomicInteger itemsHeld = new AtomicInteger();
    /** The metric of each adaptive scope change ({@code Metrics.adaptiveLimit}). */
    private static final Map<String, String> ADAPTIVE_METRICS = Map.of("stopped", "AdaptiveStops", "cut", "AdaptiveCuts",
            "raised", "AdaptiveRaises", "restored", "AdaptiveRestores");
    private final AtomicInteger redisFailOpen = new AtomicInteger();
    private final Map<String, AtomicInteger> deferredByReason = new ConcurrentHashMap<>();
    private final Map<String, Calls> byIntegration = new ConcurrentHashMap<>();
    private final Queue<RunEnd> runs = new ConcurrentLinkedQueue<>();
    private final Set<String> tenantIds = ConcurrentHashMap.newKeySet();
    private final Set<String> failOpenOperations = ConcurrentHashMap.newKeySet();

    /** What happened at one integration's handlers and breaker. */
    private static final class Calls {
        final Queue<Double> latencies = new ConcurrentLinkedQueue<>();
        final AtomicInteger errors = new AtomicInteger();
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final AtomicInteger tenantScopesOpened = new AtomicInteger();
        final AtomicInteger tenantScopesClosed = new AtomicInteger();
        /** Adaptive scope changes (AIMD) by kind: stopped, cut, raised, restored. */
        final Map<String, AtomicInteger> adaptive = new ConcurrentHashMap<>();
        final Set<String> tenantScopes = ConcurrentHashMap.newKeySet();
        final AtomicBoolean open = new AtomicBoolean();
        final Set<String> handlerKeys = ConcurrentHashMap.newKeySet();
    }

    private record RunEnd(UUID runId, double millis) {}

    @Override
    public void itemsSettled(ItemBatch batch) {
        succeeded.addAndGet(batch.succeeded());
        retried.addAndGet(batch.retried());
        parked.addAndGet(batch.parked());
        batch.deferred().forEach((reason, count) -> deferredByReason.computeIfAbsent(reason, r -> new AtomicInteger()).addAndGet(count));
        tenantIds.addAll(batch.tenantIds());
    }

    @Override
    public void itemsSuperseded(int count, Set<String> tenants) {
        superseded.addAndGet(count);
        tenantIds.addAll(tenants);
    }

    @Override
    public void itemsDead(int count, Set<String> tenants) {
        dead.addAndGet(count);
        tenantIds.addAll(tenants);
    }

    @Override
    public void handlerCall(String integrationKey, String handlerKey, Duration latency, boolean failed) {
        Calls calls = calls(integrationKey);
        calls.latencies.add(latency.toNanos() / 1_000_000.0);
        calls.handlerKeys.add(handlerKey);
        if (failed) {
            calls.errors.incrementAndGet();
        }
    }

    @Override
    public void breakerOpened(String integrationKey) {
        calls(integrationKey).opened.incrementAndGet();
    }

    @Override
    public void breakerClosed(String integrationKey) {
        calls(integrationKey).closed.incrementAndGet();
    }

    @Override
    public void tenantBreakerOpened(String integrationKey, String tenantId) {
        Calls calls = calls(integrationKey);
        calls.tenantScopesOpened.incrementAndGet();
        calls.tenantScopes.add(tenantId);
    }

    @Override
    public void tenantBreakerClosed(String integrationKey, String tenantId) {
        Calls calls = calls(integrationKey);
        calls.tenantScopesClosed.incrementAndGet();
        calls.tenantScopes.add(tenantId);
    }

    @Override
    public void breakerOpen(String integrationKey) {
        calls(integrationKey).open.set(true);
    }

    @Override
    public void adaptiveLimit(String integrationKey, String handlerKey, String tenantId, String change) {
        Calls calls = calls(integrationKey);
        calls.adaptive.computeIfAbsent(change, c -> new AtomicInteger()).incrementAndGet();
        calls.handlerKeys.add(handlerKey);
        if (tenantId != null) {
            calls.tenantScopes.add(tenantId);
        }
    }

    @Override
    public void itemsHeld(String tenantId, int count) {
        itemsHeld.addAndGet(count);
        tenantIds.add(tenantId);
    }

    @Override
    public void tenantWindowDeferrals(String tenantId, int count) {
        tenantWindowDeferrals.addAndGet(count);
        tenantIds.add(tenantId);
    }

    @Override
    public void redisFailOpen(String operation) {
        redisFailOpen.incrementAndGet();
        failOpenOperations.add(operation);
    }

    @Override
    public void runCompleted(UUID runId, String tenantId, Duration duration) {
        runs.add(new RunEnd(runId, duration.toMillis()));
        tenantIds.add(tenantId);
    }

    /** The records to publish for this invocation of {@code function}; empty when nothing happened. */
    List<MetricRecord> records(String function, String requestId, boolean coldStart) {
        List<MetricRecord> records = new ArrayList<>();
        Map<String, Object> invocation = requestId == null ? Map.of() : Map.of(REQUEST_ID, requestId);

        List<Metric> byFunction = new ArrayList<>();
        count(byFunction, "ItemsSucceeded", succeeded.get(), BY_FUNCTION);
        count(byFunction, "ItemsRetried", retried.get(), BY_FUNCTION);
        count(byFunction, "ItemsParked", parked.get(), BY_FUNCTION);
        count(byFunction, "ItemsDead", dead.get(), BY_FUNCTION);
        count(byFunction, "ItemsSuperseded", superseded.get(), BY_FUNCTION);
        count(byFunction, "TenantWindowDeferrals", tenantWindowDeferrals.get(), BY_FUNCTION);
        count(byFunction, "ItemsHeld", itemsHeld.get(), BY_FUNCTION);
        count(byFunction, "RedisFailOpen", redisFailOpen.get(), BY_FUNCTION);
        List<RunEnd> ended = List.copyOf(runs);
        if (!ended.isEmpty()) {
            byFunction.add(new Metric("RunDuration", MILLISECONDS, BY_FUNCTION, ended.stream().map(RunEnd::millis).toList()));
        }
        // Runner's own, in this record, not Powertools' captureColdStartMetric: without its aspect nothing
        // clears Powertools' JVM-wide cold-start flag, so every invocation would count as one.
        count(byFunction, "ColdStart", coldStart ? 1 : 0, BY_FUNCTION);
        if (!byFunction.isEmpty()) {
            Map<String, Object> properties = new LinkedHashMap<>(invocation);
            if (!tenantIds.isEmpty()) {
                properties.put("tenantIds", tenantIds.stream().sorted().limit(MAX_LISTED).toList());
            }
            if (!ended.isEmpty()) {
                // In the order of RunDuration's values.
                properties.put("runIds", ended.stream().limit(MAX_LISTED).map(run -> run.runId().toString()).toList());
            }
            if (!failOpenOperations.isEmpty()) {
                properties.put("failOpenOperations", failOpenOperations.stream().sorted().toList());
            }
            records.add(new MetricRecord(Map.of(FUNCTION, function), byFunction, properties));
        }

        new TreeMap<>(deferredByReason).forEach((reason, count) -> records.add(new MetricRecord(
                Map.of(FUNCTION, function, REASON, reason),
                List.of(new Metric("ItemsDeferred", COUNT, BY_REASON, List.of((double) count.get()))), invocation)));

        new TreeMap<>(byIntegration).forEach((integrationKey, calls) -> {
            List<Metric> metrics = new ArrayList<>();
            List<Double> latencies = List.copyOf(calls.latencies);
            if (!latencies.isEmpty()) {
                metrics.add(new Metric("HandlerLatency", MILLISECONDS, BY_INTEGRATION, latencies));
                // With every call, zero included: errors over calls is the error rate.
                metrics.add(new Metric("HandlerErrors", COUNT, BY_INTEGRATION, List.of((double) calls.errors.get())));
            }
            count(metrics, "BreakerOpened", calls.opened.get(), BY_INTEGRATION);
            count(metrics, "BreakerClosed", calls.closed.get(), BY_INTEGRATION);
            count(metrics, "TenantBreakerOpened", calls.tenantScopesOpened.get(), BY_INTEGRATION);
            count(metrics, "TenantBreakerClosed", calls.tenantScopesClosed.get(), BY_INTEGRATION);
            count(metrics, "BreakerOpen", calls.open.get() ? 1 : 0, BY_FUNCTION_AND_INTEGRATION);
            // A handler's (or a tenant's) scope learning its partner's limits.
            new TreeMap<>(calls.adaptive).forEach((change, n) -> count(metrics, ADAPTIVE_METRICS.get(change), n.get(), BY_INTEGRATION));
            if (!metrics.isEmpty()) {
                Map<String, Object> properties = new LinkedHashMap<>(invocation);
                if (!calls.handlerKeys.isEmpty()) {
                    properties.put("handlerKeys", calls.handlerKeys.stream().sorted().toList());
                }
                if (!calls.tenantScopes.isEmpty()) {
                    // Tenants are unbounded: a property, never a dimension.
                    properties.put("tenantIds", calls.tenantScopes.stream().sorted().limit(MAX_LISTED).toList());
                }
                records.add(new MetricRecord(Map.of(FUNCTION, function, INTEGRATION_KEY, integrationKey), metrics, properties));
            }
        });
        return records;
    }

    private Calls calls(String integrationKey) {
        return byIntegration.computeIfAbsent(integrationKey, k -> new Calls());
    }

    private static void count(List<Metric> metrics, String name, int count, List<List<String>> dimensionSets) {
        if (count > 0) {
            metrics.add(new Metric(name, COUNT, dimensionSets, List.of((double) count)));
        }
    }
}
