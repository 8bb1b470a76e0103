package dev.runner.guard;

/** An integration's breaker as of now; the times are epoch milliseconds, null when not applicable. */
public record BreakerSnapshot(String integrationKey, BreakerState state, int failures, int halfOpenSuccesses,
                              Long openedAtMs, Long halfOpenAtMs) {

    static BreakerSnapshot closed(String integrationKey) {
        return new BreakerSnapshot(integrationKey, BreakerState.CLOSED, 0, 0, null, null);
    }
}
