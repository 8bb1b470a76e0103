package dev.runner.delivery;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * What arrived recently, so that a repeat within the dedup window is not processed twice: deliveries by their
 * identity per tenant integration (delivery_ids), and items by their externalId per handler (webhook_deliveries,
 * named for the webhooks that first used it; ingest messages share it).
 */
public final class DeliveryStore {

    private final Database db;

    public DeliveryStore(Database db) {
        this.db = db;
    }

    /**
     * Records the items of a handler and returns the externalIds not seen within {@code window}, inside
     * the caller's transaction (the run that carries them commits with them). One statement.
     */
    public Set<String> recordUnseen(Connection connection, String tenantId, String integrationKey, String handlerKey,
                                    Collection<String> externalIds, Duration window) throws SQLException {
        return Set.copyOf(db.query(connection, """
                insert into webhook_deliveries (tenant_id, integration_key, handler_key, external_id)
                select ?, ?, ?, unnest(?::text[])
                on conflict (tenant_id, integration_key, handler_key, external_id) do update set received_at = now()
                    where webhook_deliveries.received_at < now() - make_interval(secs => ?)
                returning external_id
                """, row -> row.getString(1), tenantId, integrationKey, handlerKey,
                Database.array("text", externalIds.stream().distinct().toArray()), (double) window.toSeconds()));
    }

    /**
     * Records deliveries of a tenant integration under the run they would make, each kept for {@code window}, and
     * returns the ids not seen within their windows (a row recorded before kept_until: within this one), inside the
     * caller's transaction: a delivery whose run rolls back is not recorded either. One statement.
     */
    public Set<String> recordDeliveries(Connection connection, String tenantId, String integrationKey,
                                        Collection<String> deliveryIds, UUID runId, Duration window) throws SQLException {
        return Set.copyOf(db.query(connection, """
                insert into delivery_ids (tenant_id, integration_key, delivery_id, run_id, kept_until)
                select ?, ?, unnest(?::text[]), ?, now() + make_interval(secs => ?)
                on conflict (tenant_id, integration_key, delivery_id) do update
                    set received_at = now(), run_id = excluded.run_id, kept_until = excluded.kept_until
                    where coalesce(delivery_ids.kept_until, delivery_ids.received_at + make_interval(secs => ?)) < now()
                returning delivery_id
                """, row -> row.getString(1), tenantId, integrationKey,
                Database.array("text", deliveryIds.stream().distinct().toArray()), runId, (double) window.toSeconds(),
                (double) window.toSeconds()));
    }

    /** The run a delivery's first arrival made, if it made one (none when all its items were repeats). */
    public Optional<UUID> runOf(String tenantId, String integrationKey, String deliveryId) {
        return db.queryOne("""
                select d.run_id from delivery_ids d join runs r on r.run_id = d.run_id
                where d.tenant_id = ? and d.integration_key = ? and d.delivery_id = ?
                """, row -> row.getObject(1, UUID.class), tenantId, integrationKey, deliveryId);
    }

    /**
     * Forgets items that arrived longer than {@code window} ago, and deliveries past their own window (one recorded
     * before that was kept per delivery: past {@code window}): a repeat after it is processed again anyway. At most
     * {@code limit} rows of each kind; returns how many.
     */
    public int purge(Duration window, int limit) {
        int items = db.update("""
                delete from webhook_deliveries where ctid in (
                    select ctid from webhook_deliveries where received_at < now() - make_interval(secs => ?) limit ?)
                """, (double) window.toSeconds(), limit);
        int deliveries = db.update("""
                delete from delivery_ids where ctid in (
                    select ctid from delivery_ids where kept_until < now() limit ?)
                """, limit);
        int unbounded = db.update("""
                delete from delivery_ids where ctid in (
                    select ctid from delivery_ids where kept_until is null and received_at < now() - make_interval(secs => ?) limit ?)
                """, (double) window.toSeconds(), limit);
        return items + deliveries + unbounded;
    }
}
