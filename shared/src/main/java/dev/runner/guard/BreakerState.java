package dev.runner.guard;

import java.util.Set;

/**
 * The states of an integration's circuit breaker, as recordOutcome-3.lua and admitHandler-10.lua
 * apply them (the open → half-open rule is written once, in redis/includes/breakerAt.lua).
 * BreakerTransitionsIT drives those scripts and checks every change it sees against
 * {@link #TRANSITIONS}.
 */
public enum BreakerState {
    /** Calls flow; consecutive failures are counted. */
    CLOSED,
    /** Calls are deferred until openFor has passed. */
    OPEN,
    /** A bounded number of probe calls decide: enough successes close, one failure re-opens. */
    HALF_OPEN;

    /** A legal change of state. */
    public record Transition(BreakerState from, BreakerState to, String when) {}

    /** Every legal transition; nothing else happens. */
    public static final Set<Transition> TRANSITIONS = Set.of(
            new Transition(CLOSED, OPEN, "failureThreshold consecutive failures"),
            new Transition(OPEN, HALF_OPEN, "openFor has passed (seen by the next admission or report)"),
            new Transition(HALF_OPEN, CLOSED, "halfOpenSuccesses successes"),
            new Transition(HALF_OPEN, OPEN, "any failure"));

    public boolean canBecome(BreakerState next) {
        return TRANSITIONS.stream().anyMatch(t -> t.from() == this && t.to() == next);
    }

    static BreakerState fromWire(String value) {
        return switch (value == null ? "closed" : value) {
            case "closed" -> CLOSED;
            case "open" -> OPEN;
            case "half_open" -> HALF_OPEN;
            default -> throw new IllegalStateException("unknown breaker state in Redis: " + value);
        };
    }
}
