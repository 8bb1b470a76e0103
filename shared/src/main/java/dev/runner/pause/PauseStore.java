package dev.runner.pause;

import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The paused_handlers table, the truth of which handlers are paused (Redis holds a mirror), and
 * the parking of items of paused handlers and disabled tenant integrations. Every statement that
 * reads or writes a pause, or parks and unparks, lives here.
 */
public final class PauseStore {

    private final Database db;

    public PauseStore(Database db) {
        this.db = db;
    }

    /** Idempotent. */
    public void pause(HandlerRef handler) {
        db.update("insert into paused_handlers (integration_key, handler_key) values (?, ?) on conflict do nothing",
                handler.integrationKey(), handler.handlerKey());
    }

    /** True when it was paused. */
    public boolean resume(HandlerRef handler) {
        return db.update("delete from paused_handlers where integration_key = ? and handler_key = ?",
                handler.integrationKey(), handler.handlerKey()) > 0;
    }

    public boolean isPaused(HandlerRef handler) {
        return !db.query("select 1 from paused_handlers where integration_key = ? and handler_key = ?",
                row -> row.getInt(1), handler.integrationKey(), handler.handlerKey()).isEmpty();
    }

    /** Every paused handler and since when. One statement. */
    public Map<HandlerRef, Instant> paused() {
        Map<HandlerRef, Instant> paused = new HashMap<>();
        db.query("select integration_key, handler_key, paused_at from paused_handlers",
                row -> paused.put(new HandlerRef(row.getString(1), row.getString(2)), row.getTimestamp(3).toInstant()));
        return paused;
    }

    /** Those of {@code handlers} that are paused. One statement. */
    public Set<HandlerRef> pausedAmong(Collection<HandlerRef> handlers) {
        if (handlers.isEmpty()) {
            return Set.of();
        }
        String[] integrationKeys = handlers.stream().map(HandlerRef::integrationKey).toArray(String[]::new);
        String[] handlerKeys = handlers.stream().map(HandlerRef::handlerKey).toArray(String[]::new);
        return Set.copyOf(db.query("""
                select p.integration_key, p.handler_key from paused_handlers p
                join unnest(?::text[], ?::text[]) as g(integration_key, handler_key)
                  on g.integration_key = p.integration_key and g.handler_key = p.handler_key
                """, row -> new HandlerRef(row.getString(1), row.getString(2)),
                Database.array("text", integrationKeys), Database.array("text", handlerKeys)));
    }

    /**
     * Parks items of a paused handler: no SQS traffic, no attempt used. Only while the pause row
     * exists, and holding a lock on it, so a resume's delete waits for this to commit and its sweep
     * then sees what was parked: nothing is stranded. Returns those parked.
     */
    public Set<UUID> park(Collection<UUID> itemIds, HandlerRef handler) {
        return Set.copyOf(db.query("""
                update execution_items set status = 'parked', updated_at = now()
                where item_id = any(?) and status in ('queued', 'retrying')
                  and exists (select 1 from paused_handlers p where p.integration_key = ? and p.handler_key = ? for key share)
                returning item_id
                """, row -> row.getObject(1, UUID.class), Database.array("uuid", itemIds.toArray()),
                handler.integrationKey(), handler.handlerKey()));
    }

    /**
     * Parks items of a tenant integration that is disabled, like {@link #park}: only while the row
     * says disabled, holding a share lock on it, so enabling it waits for this commit and its unpark
     * then sees what was parked.
     */
    public Set<UUID> parkDisabled(Collection<UUID> itemIds, String tenantId, String integrationKey) {
        return Set.copyOf(db.query("""
                update execution_items set status = 'parked', updated_at = now()
                where item_id = any(?) and status in ('queued', 'retrying')
                  and exists (select 1 from tenant_integrations t
                              where t.tenant_id = ? and t.integration_key = ? and not t.enabled for share)
                returning item_id
                """, row -> row.getObject(1, UUID.class), Database.array("uuid", itemIds.toArray()), tenantId, integrationKey));
    }

    /**
     * A page of an unpark: the items it sent back to queued, how many parked items it looked at (some stay parked:
     * their tenant integration is disabled, or their handler paused), and the last of those, where the next page starts.
     */
    public record UnparkPage(List<ItemJob> jobs, int looked, UUID last) {}

    /**
     * At most {@code limit} of a resumed handler's parked items after {@code afterItemId}, in id order, back to queued,
     * except those of disabled tenant integrations; in the caller's transaction. Index execution_items_parked_by_handler.
     */
    public UnparkPage unparkPage(Connection connection, HandlerRef handler, UUID afterItemId, int limit) throws SQLException {
        List<UUID> picked = db.query(connection, """
                select item_id from execution_items
                where integration_key = ? and handler_key = ? and status = 'parked' and (?::uuid is null or item_id > ?)
                order by item_id limit ? for update skip locked
                """, row -> row.getObject(1, UUID.class), handler.integrationKey(), handler.handlerKey(), afterItemId, afterItemId, limit);
        return unpark(connection, picked, """
                and exists (select 1 from tenant_integrations t
                            where t.tenant_id = e.tenant_id and t.integration_key = e.integration_key and t.enabled)
                """);
    }

    /** A resumed handler's parked items: what its resume will look at. */
    public long countParked(Connection connection, HandlerRef handler) throws SQLException {
        return db.query(connection, "select count(*) from execution_items where integration_key = ? and handler_key = ? and status = 'parked'",
                row -> row.getLong(1), handler.integrationKey(), handler.handlerKey()).getFirst();
    }

    /**
     * At most {@code limit} of an enabled tenant integration's parked items after {@code afterItemId}, in id order, back
     * to queued, except those of paused handlers; in the caller's transaction. Index execution_items_by_tenant.
     */
    public UnparkPage unparkTenantPage(Connection connection, String tenantId, String integrationKey, UUID afterItemId, int limit)
            throws SQLException {
        List<UUID> picked = db.query(connection, """
                select item_id from execution_items
                where tenant_id = ? and status = 'parked' and integration_key = ? and (?::uuid is null or item_id > ?)
                order by item_id limit ? for update skip locked
                """, row -> row.getObject(1, UUID.class), tenantId, integrationKey, afterItemId, afterItemId, limit);
        return unpark(connection, picked, """
                and not exists (select 1 from paused_handlers p
                                where p.integration_key = e.integration_key and p.handler_key = e.handler_key)
                """);
    }

    /** An enabled tenant integration's parked items: what its enable will look at. */
    public long countParked(Connection connection, String tenantId, String integrationKey) throws SQLException {
        return db.query(connection, "select count(*) from execution_items where tenant_id = ? and status = 'parked' and integration_key = ?",
                row -> row.getLong(1), tenantId, integrationKey).getFirst();
    }

    /** The picked items back to queued where {@code condition} (on {@code e}) holds. */
    private UnparkPage unpark(Connection connection, List<UUID> picked, String condition) throws SQLException {
        if (picked.isEmpty()) {
            return new UnparkPage(List.of(), 0, null);
        }
        List<ItemJob> jobs = db.query(connection, """
                update execution_items e set status = 'queued', next_visible_at = null, updated_at = now()
                from runs r
                where e.item_id = any(?) and r.run_id = e.run_id and e.status = 'parked'
                """ + condition + """
                returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id, e.attempts
                """, ItemStore::job, Database.array("uuid", picked.toArray()));
        return new UnparkPage(jobs, picked.size(), picked.getLast());
    }
}
