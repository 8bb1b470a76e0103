package dev.runner.delivery;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Set;

/** Deliveries seen recently (webhook_deliveries), so a repeat within the dedup window is not processed twice. */
public final class DeliveryStore {

    private final Database db;

    public DeliveryStore(Database db) {
        this.db = db;
    }

    /**
     * Records the deliveries of a handler and returns those not seen within {@code window}, inside
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

    /** Forgets deliveries older than {@code window}: a repeat after it is processed again anyway. Returns how many. */
    public int purge(Duration window, int limit) {
        return db.update("""
                delete from webhook_deliveries where ctid in (
                    select ctid from webhook_deliveries where received_at < now() - make_interval(secs => ?) limit ?)
                """, (double) window.toSeconds(), limit);
    }
}
