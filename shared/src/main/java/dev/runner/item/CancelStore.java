package dev.runner.item;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;

/**
 * A cancelled run's items not yet called, ended {@code cancelled} a page at a time in the caller's transaction (a
 * cancel's bulk action, docs/management-api.md): the count of what a cancel will end, and its pages.
 */
public final class CancelStore {

    /** The statuses of a run's items that a cancel ends, in the order its pages take them. */
    public static final List<ItemStatus> CANCELLABLE = List.of(ItemStatus.QUEUED, ItemStatus.RETRYING, ItemStatus.PARKED,
            ItemStatus.PENDING);

    private final Database db;

    public CancelStore(Database db) {
        this.db = db;
    }

    /** A run's items a cancel will end (queued, retrying, parked, pending). Index execution_items_by_status. */
    public long countCancellable(Connection connection, UUID runId) throws SQLException {
        return db.query(connection, "select count(*) from execution_items where run_id = ? and status = any(?)", row -> row.getLong(1),
                runId, Database.array("text", CANCELLABLE.stream().map(ItemStatus::wireName).toArray())).getFirst();
    }

    /**
     * An item a cancel ended, and the handler lease it held while it waited for its callback ({@code heldLease}, its
     * member in the handler's leases set; null when it held none), which the cancel gives back once it has committed.
     */
    public record Cancelled(UUID itemId, String integrationKey, String handlerKey, String heldLease) {}

    /**
     * At most {@code limit} of a cancelled run's items in {@code status} (queued, retrying, parked or pending), after
     * {@code afterItemId} in id order, ended cancelled: one page of a cancel. Returns what it ended, in id order.
     * A range of execution_items_by_status.
     */
    public List<Cancelled> cancelPage(Connection connection, UUID runId, ItemStatus status, UUID afterItemId, int limit)
            throws SQLException {
        return db.query(connection, """
                with picked as materialized (
                    select item_id from execution_items
                    where run_id = ? and status = ? and (?::uuid is null or item_id > ?)
                    order by item_id
                    limit ? for update skip locked)
                update execution_items e set status = 'cancelled', finished_at = now(), updated_at = now()
                from picked p
                where e.item_id = p.item_id and e.status = ?
                returning e.item_id, e.integration_key, e.handler_key, e.held_lease
                """, row -> new Cancelled(row.getObject(1, UUID.class), row.getString(2), row.getString(3), row.getString(4)),
                runId, status.wireName(), afterItemId, afterItemId, limit, status.wireName())
                .stream().sorted(Comparator.comparing(Cancelled::itemId)).toList();
    }
}
