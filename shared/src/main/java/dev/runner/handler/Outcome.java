package dev.runner.handler;

import java.time.Duration;

/** What a handler call did for one item. */
public sealed interface Outcome {
    record Succeeded() implements Outcome {}

    /**
     * @param retryable false = permanent: the item goes to the DLQ now, whatever its attempts
     * @param timedOut  no answer came in time: what the adaptive limits count as a sign of overload
     */
    record Failed(String error, boolean retryable, boolean timedOut) implements Outcome {
        public Failed(String error, boolean retryable) {
            this(error, retryable, false);
        }
    }

    /** The handler asked to be called later (429 with Retry-After): not an attempt. */
    record Deferred(Duration delay, String reason) implements Outcome {}

    /**
     * The handler took the item and finishes it later through the item's callback URL (202 to
     * {@code /process}, {@code status: "pending"} in a {@code /process-batch} result; docs/handler-contract.md).
     */
    record Pending() implements Outcome {}
}
