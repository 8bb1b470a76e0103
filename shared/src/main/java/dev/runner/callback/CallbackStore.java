package dev.runner.callback;

import dev.runner.handler.Outcome;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Pending items and their callbacks in Postgres (db/migration/V60__callbacks.sql): each operation one statement, a
 * function that takes the rows it changes in the order the callback race needs (see the migration).
 */
public final class CallbackStore {

    /** An item answered pending in attempt {@code attempt}, to wait up to {@code waitFor}; {@code heldLease} the lease it keeps, or null. */
    public record Parking(UUID itemId, int attempt, Duration waitFor, String heldLease) {}

    /** A callback that came before its attempt's pending answer was recorded: the item is back in processing, to settle with it. */
    public record Early(UUID itemId, int attempt, Outcome answer) {}

    /** What a callback came to ({@code runner_take_callback}'s verdicts). */
    public enum Verdict { APPLIED, EARLY, REPEATED, EXPIRED, ENDED, UNKNOWN }

    /**
     * A callback as taken.
     *
     * @param answer    the attempt's late answer: this callback's (applied, early) or the first one's (repeated); null otherwise
     * @param status    the item's status when the callback came (after it, for applied)
     * @param job       the item, to settle (applied); null when unknown
     * @param heldLease the concurrency lease it kept while it waited, or null
     * @param waited    how long it waited (applied), else null
     */
    public record Taken(Verdict verdict, Outcome answer, String status, ItemJob job, String heldLease, Duration waited) {}

    /** A pending item timed out: back in processing in attempt {@code attempt}, to settle as a retryable failure. */
    public record Expired(ItemJob job, int attempt, String heldLease, Duration waited) {}

    private final Database db;

    public CallbackStore(Database db) {
        this.db = db;
    }

    /** Parks the pending answers of a settled batch; returns the callbacks that came before (runner_park_pending). */
    public List<Early> park(List<Parking> items) {
        if (items.isEmpty()) {
            return List.of();
        }
        return db.query("select item_id, attempt, ok, error, retryable from runner_park_pending(?::uuid[], ?::int[], ?::int8[], ?::text[])",
                row -> new Early(row.getObject(1, UUID.class), row.getInt(2), answer(row, 3)),
                Database.array("uuid", items.stream().map(Parking::itemId).toArray()),
                Database.array("int4", items.stream().map(Parking::attempt).toArray()),
                Database.array("int8", items.stream().map(p -> p.waitFor().toMillis()).toArray()),
                Database.array("text", items.stream().map(Parking::heldLease).toArray()));
    }

    /** Takes a callback for {@code itemId}'s attempt {@code attempt} whose signature was checked (runner_take_callback). */
    public Taken take(UUID itemId, int attempt, Outcome answer) {
        boolean ok = answer instanceof Outcome.Succeeded;
        String error = answer instanceof Outcome.Failed f ? f.error() : null;
        boolean retryable = !(answer instanceof Outcome.Failed f) || f.retryable();
        return db.query("""
                select verdict, source, ok, error, retryable, status, run_id, tenant_id, integration_key, handler_key, direction, trigger,
                    external_id, held_lease, waited_ms
                from runner_take_callback(?, ?, ?, ?, ?)
                """, row -> {
                    Verdict verdict = Verdict.valueOf(row.getString(1).toUpperCase(java.util.Locale.ROOT));
                    ItemJob job = row.getObject(7) == null ? null : new ItemJob(row.getObject(7, UUID.class), itemId, row.getString(8),
                            row.getString(9), row.getString(10), Direction.fromWire(row.getString(11)), Trigger.fromWire(row.getString(12)),
                            row.getString(13), attempt, 0);
                    Object waited = row.getObject(15);
                    return new Taken(verdict, row.getObject(3) == null ? null : answer(row, 3), row.getString(6), job, row.getString(14),
                            waited == null ? null : Duration.ofMillis(row.getLong(15)));
                }, itemId, attempt, ok, error, retryable).getFirst();
    }

    /** At most {@code limit} pending items past their wait, timed out (runner_expire_pending). */
    public List<Expired> expire(int limit) {
        return db.query("""
                select run_id, item_id, tenant_id, integration_key, handler_key, direction, trigger, external_id, attempts, held_lease, waited_ms
                from runner_expire_pending(?)
                """, row -> new Expired(new ItemJob(row.getObject(1, UUID.class), row.getObject(2, UUID.class), row.getString(3),
                        row.getString(4), row.getString(5), Direction.fromWire(row.getString(6)), Trigger.fromWire(row.getString(7)),
                        row.getString(8), row.getInt(9), 0), row.getInt(9), row.getString(10), Duration.ofMillis(row.getLong(11))), limit);
    }

    /** At most {@code limit} leases held by pending items, with when each frees itself (index execution_items_pending_due). */
    public List<HeldLeases.Held> heldLeases(int limit) {
        return db.query("""
                select integration_key, handler_key, held_lease, (extract(epoch from callback_due_at) * 1000)::bigint
                from execution_items where status = 'pending' and held_lease is not null
                order by callback_due_at limit ?
                """, row -> new HeldLeases.Held(row.getString(1), row.getString(2), row.getString(3), row.getLong(4)), limit);
    }

    /** The answer in columns ok, error, retryable from {@code first}. */
    private static Outcome answer(ResultSet row, int first) throws SQLException {
        if (row.getBoolean(first)) {
            return new Outcome.Succeeded();
        }
        String error = row.getString(first + 1);
        return new Outcome.Failed(error == null ? "the handler's callback reported failure" : error, row.getBoolean(first + 2));
    }
}
