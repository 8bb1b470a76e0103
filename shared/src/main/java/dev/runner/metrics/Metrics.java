package dev.runner.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What Runner tells its operators in numbers (docs/metrics.md is the contract: names, units,
 * dimensions). The core says what happened, once per batch or call, never per item; what becomes
 * of it is the implementation's business: the functions add up an invocation's worth and publish
 * it as CloudWatch EMF, the local runtime prints it. A plug, as {@link dev.runner.cost.CostTracker}:
 * the default does nothing. Implementations are called from several threads at once.
 */
public interface Metrics {

    /** Ignores everything. */
    Metrics NONE = new Metrics() {};

    /**
     * The fates of one item batch, as the worker settled it.
     *
     * @param deferred  items sent back to wait without using an attempt, by reason (snake case, docs/metrics.md)
     * @param tenantIds the tenants whose items the batch carried
     */
    record ItemBatch(int succeeded, int retried, int parked, Map<String, Integer> deferred, Set<String> tenantIds) {
        public ItemBatch {
            deferred = Map.copyOf(deferred);
            tenantIds = Set.copyOf(tenantIds);
        }
    }

    /** One item batch settled. */
    default void itemsSettled(ItemBatch batch) {}

    /** Items the intake ended superseded by coalescing (dev.runner.coalescing), of these tenants. */
    default void itemsSuperseded(int count, Set<String> tenantIds) {}

    /** Items the dead-letter consumer marked dead, of these tenants. */
    default void itemsDead(int count, Set<String> tenantIds) {}

    /**
     * One HTTP call to a handler ({@code /fetch}, {@code /process}, {@code /process-batch}),
     * failed or not: {@code failed} when it got no usable answer (5xx, 4xx, timeout, connection),
     * not when the handler asked for a delay (429 with Retry-After).
     */
    default void handlerCall(String integrationKey, String handlerKey, Duration latency, boolean failed) {}

    /** The integration's breaker went to open (from closed or half-open). */
    default void breakerOpened(String integrationKey) {}

    /** The integration's breaker closed again: its half-open probes succeeded. */
    default void breakerClosed(String integrationKey) {}

    /** A tenant's own scope of the integration's breaker went to open: its calls alone failed. */
    default void tenantBreakerOpened(String integrationKey, String tenantId) {}

    /** A tenant's scope of the integration's breaker closed again: its half-open probes succeeded. */
    default void tenantBreakerClosed(String integrationKey, String tenantId) {}

    /**
     * A handler's adaptive scope changed (AIMD, docs/resilience.md): {@code change} is stopped (a
     * Retry-After), cut, raised or restored (back at the configured limits); {@code tenantId} null
     * for the handler's own scope.
     */
    default void adaptiveLimit(String integrationKey, String handlerKey, String tenantId, String change) {}

    /** Admission found the integration's breaker open or half-open (once per batch and integration). */
    default void breakerOpen(String integrationKey) {}

    /** Items of a tenant held in Postgres, unsent, because their window slot lay beyond the backlog horizon. */
    default void itemsHeld(String tenantId, int count) {}

    /** Items of a tenant sent with a delay because its window was full (slots reserved at the source). */
    default void tenantWindowDeferrals(String tenantId, int count) {}

    /** A Redis operation failed open: {@code operation} names it (admission, report, breaker read, cache read, slot reservation). */
    default void redisFailOpen(String operation) {}

    /** A run ended, {@code duration} after it was created. */
    default void runCompleted(UUID runId, String tenantId, Duration duration) {}
}
