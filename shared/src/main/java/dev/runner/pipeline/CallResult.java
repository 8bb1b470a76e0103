package dev.runner.pipeline;

import dev.runner.guard.GroupReport;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.pipeline.Settlement.Item;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** What one handler call came to: its items' outcomes, and what it told of the endpoint. */
record CallResult(HandlerRef group, Map<UUID, Outcome> outcomes, Observation observation) {

    /** What one handler call told about its endpoint: the breaker's input. */
    enum Observation { UP, DOWN, NONE }

    /** Down when every item failed retryably; up when the handler answered anything but a request to wait. */
    static CallResult of(HandlerRef group, Map<UUID, Outcome> outcomes) {
        boolean allDown = !outcomes.isEmpty() && outcomes.values().stream()
                .allMatch(o -> o instanceof Outcome.Failed f && f.retryable());
        boolean anyAnswer = outcomes.values().stream().anyMatch(o -> !(o instanceof Outcome.Deferred));
        return new CallResult(group, outcomes, allDown ? Observation.DOWN : anyAnswer ? Observation.UP : Observation.NONE);
    }

    /**
     * What the call told of the partner, for the breaker and the adaptive limits: throttled when it
     * asked to wait (429 with Retry-After), timed out when every item's failure was a timeout, else
     * answered or failed as {@link #observation}; null when it told nothing.
     */
    GroupReport.Observed observed() {
        if (outcomes.values().stream().anyMatch(Outcome.Deferred.class::isInstance)) {
            return GroupReport.Observed.THROTTLED;
        }
        return switch (observation) {
            case UP -> GroupReport.Observed.ANSWERED;
            case DOWN -> outcomes.values().stream().allMatch(o -> o instanceof Outcome.Failed f && f.timedOut())
                    ? GroupReport.Observed.TIMED_OUT : GroupReport.Observed.FAILED;
            case NONE -> null;
        };
    }

    /** The longest Retry-After the call's answers asked for (ms), 0 when none. */
    long retryAfterMs() {
        return outcomes.values().stream().filter(Outcome.Deferred.class::isInstance)
                .mapToLong(o -> ((Outcome.Deferred) o).delay().toMillis()).max().orElse(0);
    }

    /** Every item of the call failed alike, retryably: a crash or a missed deadline, not an answer. */
    static CallResult failed(HandlerRef group, List<Item> members, String error) {
        Map<UUID, Outcome> outcomes = new HashMap<>();
        members.forEach(item -> outcomes.put(item.itemId(), new Outcome.Failed(error, true)));
        return new CallResult(group, outcomes, Observation.DOWN);
    }
}
