package dev.runner.pipeline;

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

    /** Every item of the call failed alike, retryably: a crash or a missed deadline, not an answer. */
    static CallResult failed(HandlerRef group, List<Item> members, String error) {
        Map<UUID, Outcome> outcomes = new HashMap<>();
        members.forEach(item -> outcomes.put(item.itemId(), new Outcome.Failed(error, true)));
        return new CallResult(group, outcomes, Observation.DOWN);
    }
}
