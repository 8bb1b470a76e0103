package dev.runner.guard;

import java.time.Duration;
import java.util.Objects;

/** The guard's decision for one item. */
public sealed interface Admission {

    String itemId();

    /** Call the handler now; a concurrency lease is held until {@link Guard#report}. */
    record Admitted(String itemId) implements Admission {}

    /** Send the item again after {@code delay}; no attempt is consumed. */
    record Deferred(String itemId, Duration delay, DeferReason reason) implements Admission {
        public Deferred {
            Objects.requireNonNull(delay, "delay");
            Objects.requireNonNull(reason, "reason");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("delay < 0: " + delay);
            }
        }
    }

    /** The handler is paused: the worker parks the item until it is resumed. */
    record Paused(String itemId) implements Admission {}
}
