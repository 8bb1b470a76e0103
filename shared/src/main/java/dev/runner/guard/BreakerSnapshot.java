package dev.runner.guard;

import java.util.List;

/**
 * An integration's breaker as of now; the times are epoch milliseconds, null when not applicable.
 * An open breaker's {@code halfOpenAtMs} is when it will go half-open (its "open until").
 *
 * @param tenants the tenant scopes with anything to tell (a failure counted, or open or half-open);
 *                a tenant not listed is closed with no failure
 */
public record BreakerSnapshot(String integrationKey, BreakerState state, int failures, int halfOpenSuccesses,
                              Long openedAtMs, Long halfOpenAtMs, List<TenantScope> tenants) {

    /** One tenant's scope of the breaker: the same fields, on that tenant's calls alone. */
    public record TenantScope(String tenantId, BreakerState state, int failures, int halfOpenSuccesses,
                              Long openedAtMs, Long halfOpenAtMs) {

        com.fasterxml.jackson.databind.node.ObjectNode toJson() {
            var node = dev.runner.json.Json.object();
            node.put("tenantId", tenantId);
            putState(node, state, failures, halfOpenSuccesses, openedAtMs, halfOpenAtMs);
            return node;
        }
    }

    public BreakerSnapshot {
        tenants = tenants == null ? List.of() : List.copyOf(tenants);
    }

    public BreakerSnapshot(String integrationKey, BreakerState state, int failures, int halfOpenSuccesses,
                           Long openedAtMs, Long halfOpenAtMs) {
        this(integrationKey, state, failures, halfOpenSuccesses, openedAtMs, halfOpenAtMs, List.of());
    }

    /** The management API's view (GET /breakers/{integrationKey}). */
    public com.fasterxml.jackson.databind.node.ObjectNode toJson() {
        var node = dev.runner.json.Json.object();
        node.put("integrationKey", integrationKey);
        putState(node, state, failures, halfOpenSuccesses, openedAtMs, halfOpenAtMs);
        var scopes = node.putArray("tenants");
        tenants.forEach(scope -> scopes.add(scope.toJson()));
        return node;
    }

    private static void putState(com.fasterxml.jackson.databind.node.ObjectNode node, BreakerState state, int failures,
                                 int halfOpenSuccesses, Long openedAtMs, Long halfOpenAtMs) {
        node.put("state", state.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        node.put("failures", failures);
        node.put("halfOpenSuccesses", halfOpenSuccesses);
        node.put("openedAt", openedAtMs == null ? null : java.time.Instant.ofEpochMilli(openedAtMs).toString());
        node.put("halfOpenAt", halfOpenAtMs == null ? null : java.time.Instant.ofEpochMilli(halfOpenAtMs).toString());
    }

    static BreakerSnapshot closed(String integrationKey) {
        return new BreakerSnapshot(integrationKey, BreakerState.CLOSED, 0, 0, null, null);
    }
}
