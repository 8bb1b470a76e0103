package dev.runner.guard;

/**
 * An integration's breaker as of now; the times are epoch milliseconds, null when not applicable.
 * An open breaker's {@code halfOpenAtMs} is when it will go half-open (its "open until").
 */
public record BreakerSnapshot(String integrationKey, BreakerState state, int failures, int halfOpenSuccesses,
                              Long openedAtMs, Long halfOpenAtMs) {

    /** The management API's view (GET /breakers/{integrationKey}). */
    public com.fasterxml.jackson.databind.node.ObjectNode toJson() {
        var node = dev.runner.json.Json.object();
        node.put("integrationKey", integrationKey);
        node.put("state", state.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        node.put("failures", failures);
        node.put("halfOpenSuccesses", halfOpenSuccesses);
        node.put("openedAt", openedAtMs == null ? null : java.time.Instant.ofEpochMilli(openedAtMs).toString());
        node.put("halfOpenAt", halfOpenAtMs == null ? null : java.time.Instant.ofEpochMilli(halfOpenAtMs).toString());
        return node;
    }

    static BreakerSnapshot closed(String integrationKey) {
        return new BreakerSnapshot(integrationKey, BreakerState.CLOSED, 0, 0, null, null);
    }
}
