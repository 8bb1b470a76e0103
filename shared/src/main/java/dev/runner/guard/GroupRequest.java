package dev.runner.guard;

import java.time.Duration;
import java.util.List;

/**
 * The items of one SQS batch that go to the same (integration, handler).
 *
 * @param itemsPerCall how many items one handler call carries (1, or the handler's batch size):
 *                     concurrency is counted in calls
 * @param expectedCall how long one call is expected to take: what a lease records, so that items
 *                     finding no lease free wait for the one expected back first
 * @param holdFor      the most the caller may hold what it is granted (its invocation's time left):
 *                     how long an admitted urgent item keeps the share kept for urgent items
 */
public record GroupRequest(String integrationKey, String handlerKey, ConcurrencyAndRate limits, List<Candidate> items,
                           int itemsPerCall, Duration expectedCall, Duration holdFor) {

    /** Calls of one item, expected to take a second, held at most a minute. */
    public GroupRequest(String integrationKey, String handlerKey, ConcurrencyAndRate limits, List<Candidate> items) {
        this(integrationKey, handlerKey, limits, items, 1, Duration.ofSeconds(1), Duration.ofMinutes(1));
    }

    public GroupRequest {
        if (integrationKey == null || integrationKey.isEmpty()) {
            throw new IllegalArgumentException("integrationKey is empty");
        }
        if (handlerKey == null || handlerKey.isEmpty()) {
            throw new IllegalArgumentException("handlerKey is empty");
        }
        if (itemsPerCall < 1) {
            throw new IllegalArgumentException("itemsPerCall < 1: " + itemsPerCall);
        }
        if (expectedCall.isNegative() || holdFor.isNegative()) {
            throw new IllegalArgumentException("negative durations: " + expectedCall + ", " + holdFor);
        }
        limits = limits == null ? ConcurrencyAndRate.UNLIMITED : limits;
        items = List.copyOf(items);
    }
}
