package dev.runner.pipeline;

import dev.runner.integration.HandlerRef;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long a handler's calls take, as this process has seen them (a moving average): what a lease
 * records as its holder's expected end, and what a lane needs left to start another call.
 */
public final class CallTimes {

    /**
     * Before any call was seen. Low on purpose: a lease that records too early an end costs its
     * waiters a few early asks, one that records too late an end leaves the handler's limit idle
     * while they sleep.
     */
    private static final long FIRST_GUESS_NANOS = Duration.ofMillis(50).toNanos();
    /** Weight of the newest observation. */
    private static final double WEIGHT = 0.2;

    private final ConcurrentHashMap<HandlerRef, Long> averageNanos = new ConcurrentHashMap<>();

    /** The expected duration of one call, never above {@code ceiling} (the handler's timeout). */
    Duration expected(HandlerRef handler, Duration ceiling) {
        long nanos = averageNanos.getOrDefault(handler, FIRST_GUESS_NANOS);
        return Duration.ofNanos(Math.min(nanos, ceiling.toNanos()));
    }

    void observed(HandlerRef handler, long tookNanos) {
        averageNanos.merge(handler, tookNanos, (old, now) -> (long) (old * (1 - WEIGHT) + now * WEIGHT));
    }
}
