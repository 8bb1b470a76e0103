package dev.runner.guard;

import java.time.Duration;
import java.util.Map;

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

    /**
     * The breaker as its Redis hash holds it, seen at {@code nowMs}: an open breaker whose open
     * time has passed reads as half-open already (the next admission or report writes that move).
     */
    static BreakerSnapshot of(String integrationKey, Map<String, String> hash, long nowMs, Duration openFor) {
        if (hash.isEmpty()) {
            return closed(integrationKey);
        }
        BreakerState state = BreakerState.fromWire(hash.get("state"));
        Long openedAt = longOrNull(hash.get("openedAt"));
        Long halfOpenAt = longOrNull(hash.get("halfOpenAt"));
        Long successes = longOrNull(hash.get("successes"));
        if (state == BreakerState.OPEN && openedAt != null) {
            // Open until openedAt + openFor: that is when it goes (or, once past, went) half-open.
            halfOpenAt = openedAt + openFor.toMillis();
            if (nowMs >= halfOpenAt) {
                state = BreakerState.HALF_OPEN;
                successes = 0L;
            }
        }
        Long failures = longOrNull(hash.get("failures"));
        return new BreakerSnapshot(integrationKey, state, failures == null ? 0 : failures.intValue(),
                state == BreakerState.HALF_OPEN && successes != null ? successes.intValue() : 0, openedAt, halfOpenAt);
    }

    private static Long longOrNull(String value) {
        return value == null ? null : Long.valueOf(value);
    }

    static BreakerSnapshot closed(String integrationKey) {
        return new BreakerSnapshot(integrationKey, BreakerState.CLOSED, 0, 0, null, null);
    }
}
