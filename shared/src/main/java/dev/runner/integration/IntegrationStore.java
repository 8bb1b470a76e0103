package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Types and tenant integrations (with their schedules rows), in Postgres. */
public final class IntegrationStore {

    private final Database db;
    private final ScheduleStore schedules;

    public IntegrationStore(Database db, ScheduleStore schedules) {
        this.db = db;
        this.schedules = schedules;
    }

    /** The type's JSON as stored (what the types cache holds), or null. */
    public String typeJson(String integrationKey) {
        return db.queryOne("""
                        select integration_key, name, handlers::text, webhook_scheme from integration_types where integration_key = ?
                        """, row -> {
                            var node = Json.object();
                            node.put("integrationKey", row.getString(1));
                            node.put("name", row.getString(2));
                            node.set("handlers", Json.parse(row.getString(3)));
                            node.put("webhookScheme", row.getString(4));
                            return Json.write(node);
                        }, integrationKey)
                .orElse(null);
    }

    public void putType(IntegrationType type) {
        db.update("""
                insert into integration_types (integration_key, name, handlers, webhook_scheme) values (?, ?, ?, ?)
                on conflict (integration_key) do update set name = excluded.name, handlers = excluded.handlers,
                    webhook_scheme = excluded.webhook_scheme, updated_at = now()
                """, type.integrationKey(), type.name(), new Database.JsonbParam(Json.write(type.toJson().get("handlers"))),
                type.webhookScheme().wireName());
    }

    public Optional<TenantIntegration> tenantIntegration(String tenantId, String integrationKey) {
        return db.queryOne("""
                select tenant_id, integration_key, enabled, webhook_secrets, settings::text, schedules::text
                from tenant_integrations where tenant_id = ? and integration_key = ?
                """, IntegrationStore::tenantIntegration, tenantId, integrationKey);
    }

    /** The tenant integrations of {@code keys} that exist, in one statement. */
    public Map<Integrations.TenantKey, TenantIntegration> tenantIntegrations(Collection<Integrations.TenantKey> keys) {
        Map<Integrations.TenantKey, TenantIntegration> found = new HashMap<>();
        db.query("""
                select t.tenant_id, t.integration_key, t.enabled, t.webhook_secrets, t.settings::text, t.schedules::text
                from tenant_integrations t join unnest(?::text[], ?::text[]) as k(tenant_id, integration_key)
                    on t.tenant_id = k.tenant_id and t.integration_key = k.integration_key
                """, row -> found.put(new Integrations.TenantKey(row.getString(1), row.getString(2)), tenantIntegration(row)),
                Database.array("text", keys.stream().map(Integrations.TenantKey::tenantId).toArray()),
                Database.array("text", keys.stream().map(Integrations.TenantKey::integrationKey).toArray()));
        return found;
    }

    /** From the columns tenant_id, integration_key, enabled, webhook_secrets, settings, schedules. */
    private static TenantIntegration tenantIntegration(ResultSet row) throws SQLException {
        Map<String, String> schedules = new LinkedHashMap<>();
        Json.parse(row.getString(6)).properties().forEach(e -> schedules.put(e.getKey(), e.getValue().asText()));
        return new TenantIntegration(row.getString(1), row.getString(2), row.getBoolean(3), List.of((String[]) row.getArray(4).getArray()),
                Json.parse(row.getString(5)), schedules);
    }

    /**
     * Upserts the tenant integration and replaces its schedules rows in one transaction. Secrets
     * left out of the update (null) keep the stored ones (they are write-only, so clients cannot echo them).
     */
    public void putTenantIntegration(TenantIntegration integration, Map<String, Instant> firstFires) {
        db.inTransaction(connection -> {
            var schedulesJson = Json.object();
            integration.schedules().forEach(schedulesJson::put);
            db.update(connection, """
                    insert into tenant_integrations (tenant_id, integration_key, enabled, webhook_secrets, settings, schedules)
                    values (?, ?, ?, coalesce(?::text[], '{}'), ?, ?)
                    on conflict (tenant_id, integration_key) do update set
                        enabled = excluded.enabled,
                        webhook_secrets = case when ?::text[] is null then tenant_integrations.webhook_secrets
                                               else excluded.webhook_secrets end,
                        settings = excluded.settings,
                        schedules = excluded.schedules,
                        updated_at = now()
                    """, integration.tenantId(), integration.integrationKey(), integration.enabled(), secrets(integration),
                    new Database.JsonbParam(Json.write(integration.settings())), new Database.JsonbParam(Json.write(schedulesJson)),
                    secrets(integration));
            schedules.replace(connection, integration.tenantId(), integration.integrationKey(), integration.schedules(), firstFires);
            return null;
        });
    }

    private static Database.ArrayParam secrets(TenantIntegration integration) {
        return integration.webhookSecrets() == null ? null : Database.array("text", integration.webhookSecrets().toArray());
    }
}
