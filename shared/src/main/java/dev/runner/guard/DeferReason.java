package dev.runner.guard;

/** Why an item waits. None of them is a failure: a deferral never consumes an attempt. */
public enum DeferReason {
    /** The integration's breaker is open; the delay ends when it goes half-open. */
    BREAKER_OPEN,
    /** The breaker is half-open and its probes are all in flight. */
    BREAKER_PROBING,
    /** The handler's calls of the last minute reached its rate. */
    HANDLER_RATE,
    /** The handler's calls in flight reached its concurrency. */
    HANDLER_CONCURRENCY,
    /** The tenant's sliding window is full; the delay ends at the slot reserved for the item. */
    TENANT_LIMIT,
    /** The partner asked to wait (429 with Retry-After) for the item's scope: the handler's, or its tenant's of it. */
    ADAPTIVE_STOP,
    /** The handler's (or its tenant's) limit learnt from the partner's answers (AIMD), below the configured one, is reached. */
    ADAPTIVE_LIMIT;

    /** Lower case, as the API and the charts name it. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
