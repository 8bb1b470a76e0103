package dev.runner.run;

import java.util.Locale;

/**
 * A run's life: queued → fetching → running → completed | completed_with_errors; failed when the fetch gives up;
 * cancelled from any open status (and running again when its dead items are redriven).
 */
public enum RunStatus {
    /** Created, its RunJob on a runs tier. */
    QUEUED,
    /** The run worker is reading the handler's pages. */
    FETCHING,
    /** Every item is known; items are being processed. */
    RUNNING,
    /** Every item succeeded. */
    COMPLETED,
    /** Every item ended and at least one is dead. */
    COMPLETED_WITH_ERRORS,
    /** The run could not fetch its items. */
    FAILED,
    /** An operator cancelled it: its items not yet called never will be. */
    CANCELLED;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static RunStatus fromWire(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
