package dev.runner.item;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Dead items back to work (redrives, docs/management-api.md): one item, or a page of a filter's matches, with fresh
 * attempts and their history kept, in the caller's transaction, which also reopens their runs (RunStore.reopen); and
 * the count of what a redrive will do. Every statement reads the dead-item indexes.
 */
public final class RedriveStore {

    private final Database db;

    public RedriveStore(Database db) {
        this.db = db;
    }

    /** One item back to work if it is dead; empty otherwise. */
    public List<ItemJob> redriveItem(Connection connection, UUID itemId) throws SQLException {
        return redrive(connection, ItemFilter.ALL, itemId, null, null, 1).jobs();
    }

    /**
     * A page of a redrive: what it put back to work, and the (dlq_at, item_id) of the last item it took, where the next
     * page starts; null when it took none.
     */
    public record RedrivePage(List<ItemJob> jobs, Instant lastDlqAt, UUID lastItemId) {}

    /**
     * At most {@code limit} dead items matching {@code filter}, dead no later than {@code deadBy}, after the (dlq_at,
     * item_id) position {@code after} when given, oldest dead first, back to work: one page of a redrive. Indexes
     * execution_items_dead_by_tenant, _by_run, _by_handler (or execution_items_dead), in their order.
     */
    public RedrivePage redrivePage(Connection connection, ItemFilter filter, Instant deadBy, Instant afterDlqAt, UUID afterItemId,
                                   int limit) throws SQLException {
        return redrive(connection, filter, null, deadBy, afterDlqAt == null ? null : new Object[] {afterDlqAt, afterItemId}, limit);
    }

    /**
     * Dead items back to work with fresh attempts (their history kept): the one statement every
     * redrive runs, skipping rows another redrive holds. The pick is a materialized CTE because a LIMIT … SKIP LOCKED
     * subquery under {@code IN} may be rescanned by the plan, and a rescan skips the rows this statement already
     * updated, so takes more than the limit. The caller reopens the items' runs.
     */
    private RedrivePage redrive(Connection connection, ItemFilter filter, UUID itemId, Instant deadBy, Object[] after, int limit)
            throws SQLException {
        Object afterAt = after == null ? null : after[0];
        Object afterId = after == null ? null : after[1];
        Instant[] lastAt = {null};
        UUID[] lastId = {null};
        List<ItemJob> jobs = db.query(connection, """
                with picked as materialized (
                    select item_id, dlq_at from execution_items
                    where status = 'dead'
                      and (?::text is null or tenant_id = ?)
                      and (?::text is null or integration_key = ?)
                      and (?::text is null or handler_key = ?)
                      and (?::uuid is null or run_id = ?)
                      and (?::uuid is null or item_id = ?)
                      and (?::timestamptz is null or dlq_at <= ?)
                      and (?::timestamptz is null or (dlq_at, item_id) > (?, ?))
                    order by dlq_at, item_id
                    limit ? for update skip locked)
                update execution_items e set status = 'queued', attempts = 0, dlq_at = null, claimed_at = null,
                    finished_at = null, next_visible_at = null, updated_at = now()
                from picked p, runs r
                where e.item_id = p.item_id and r.run_id = e.run_id and e.status = 'dead'
                returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id,
                    e.attempts, p.dlq_at
                """, row -> {
                    Timestamp dlqAt = row.getTimestamp(10);
                    Instant at = dlqAt == null ? Instant.EPOCH : dlqAt.toInstant();
                    UUID id = row.getObject(2, UUID.class);
                    if (lastAt[0] == null || at.isAfter(lastAt[0]) || at.equals(lastAt[0]) && id.compareTo(lastId[0]) > 0) {
                        lastAt[0] = at;
                        lastId[0] = id;
                    }
                    return ItemStore.job(row);
                }, filter.tenantId(), filter.tenantId(), filter.integrationKey(), filter.integrationKey(),
                filter.handlerKey(), filter.handlerKey(), filter.runId(), filter.runId(), itemId, itemId, deadBy, deadBy,
                afterAt, afterAt, afterId, limit);
        return new RedrivePage(jobs, lastAt[0], lastId[0]);
    }

    /**
     * Dead items matching {@code filter}, dead no later than {@code deadBy} when given, counted up to {@code cap}: what a
     * redrive will do, or what is left for another. Reads the dead-item indexes only.
     */
    public long countDead(ItemFilter filter, Instant deadBy, long cap) {
        return db.query("""
                select count(*) from (
                    select 1 from execution_items
                    where status = 'dead'
                      and (?::text is null or tenant_id = ?)
                      and (?::text is null or integration_key = ?)
                      and (?::text is null or handler_key = ?)
                      and (?::uuid is null or run_id = ?)
                      and (?::timestamptz is null or dlq_at <= ?)
                    limit ?) capped
                """, row -> row.getLong(1), filter.tenantId(), filter.tenantId(), filter.integrationKey(), filter.integrationKey(),
                filter.handlerKey(), filter.handlerKey(), filter.runId(), filter.runId(), deadBy, deadBy, cap).getFirst();
    }
}
