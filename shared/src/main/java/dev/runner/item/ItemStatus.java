package dev.runner.item;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * An item's life. queued → processing → succeeded; processing → retrying → processing (next
 * attempt); processing → dead (via the DLQ consumer, which stamps dlq_at); queued → parked →
 * queued while its handler is paused; dead → queued on redrive; queued, retrying, parked → cancelled when
 * its run is cancelled (an item in flight finishes first); processing → pending when its handler answers pending, pending →
 * processing when its callback comes or its wait ends (the answer then settled as a synchronous one), pending → cancelled
 * by a cancel; accepted → superseded when coalescing folds its update into an item of its record that waits
 * (dev.runner.coalescing; superseded_by names that item). Postgres applies each move
 * with {@code UPDATE … WHERE status = …}, so a lost race is a zero-row update.
 */
public enum ItemStatus {
    QUEUED,
    PROCESSING,
    SUCCEEDED,
    RETRYING,
    DEAD,
    PARKED,
    CANCELLED,
    /** Its handler answered pending: it waits for its callback (or the wait's end), holding no claim and no message. */
    PENDING,
    /** Ended by coalescing: another item's call carried its update, or a later one (execution_items.superseded_by). */
    SUPERSEDED;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Optional<ItemStatus> parse(String value) {
        return Arrays.stream(values()).filter(s -> s.wireName().equals(value)).findFirst();
    }

    public static ItemStatus fromWire(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
