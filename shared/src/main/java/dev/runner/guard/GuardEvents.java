package dev.runner.guard;

/**
 * Hears the guard failing open: Redis unreachable (or a script failing), so items flow without
 * breaker, limits or tenant window until it is back. Each time is told here so it can be counted
 * and alarmed on (the {@code RedisFailOpen} metric), not only logged. A plug with a no-op default,
 * as {@code cost.CostTracker}.
 */
public interface GuardEvents {

    /** Ignores everything. */
    GuardEvents NONE = new GuardEvents() {};

    /** Where the guard failed open. */
    enum Where {
        /** The item worker's batch was admitted without checks. */
        ADMISSION,
        /** A producer sent items without reserved tenant slots (no delays). */
        RESERVATION,
        /** Breaker outcomes and lease releases were dropped (leases expire by TTL). */
        REPORT,
        /** A breaker was read as closed. */
        BREAKER_READ
    }

    /** Called once per failed-open call: where, why (an outage or a failing script), and how many items or reports it let through unchecked. */
    default void failedOpen(Where where, FailOpen why, int count) {}
}
