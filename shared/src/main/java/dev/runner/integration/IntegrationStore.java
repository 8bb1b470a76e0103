package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;

import java.time.Instant;
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
                select enabled, webhook_secrets, settings::text, schedules::text, weight
                from tenant_integrations where tenant_id = ? and integration_key = ?
                """, row -> {
            Map<String, String> schedules = new LinkedHashMap<>();
            Json.parse(row.getString(4)).properties().forEach(e -> schedules.put(e.getKey(), e.getValue().asText()));
            return new TenantIntegration(tenantId, integrationKey, row.getBoolean(1), List.of((String[]) row.getArray(2).getArray()),
                    Json.parse(row.getString(3)), schedules, row.getInt(5));
        }, tenantId, integrationKey);
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
                    insert into tenant_integrations (tenant_id, integration_key, enabled, webhook_secrets, settings, schedules, weight)
                    values (?, ?, ?, coalesce(?::text[], '{}'), ?, ?, coalesce(?::int, 1))
                    on conflict (tenant_id, integration_key) do update set
                        enabled = excluded.enabled,
                        webhook_secrets = case when ?::text[] is null then tenant_integrations.webhook_secrets
                                               else excluded.webhook_secrets end,
                        settings = excluded.settings,
                        schedules = excluded.schedules,
                        weight = coalesce(?::int, tenant_integrations.weight),
                        updated_at = now()
                    """, integration.tenantId(), integration.integrationKey(), integration.enabled(), secrets(integration),
                    new Database.JsonbParam(Json.write(integration.settings())), new Database.JsonbParam(Json.write(schedulesJson)),
                    integration.weight(), secrets(integration), integration.weight());
            schedules.replace(connection, integration.tenantId(), integration.integrationKey(), integration.schedules(), firstFires);
            return null;
        });
    }

    private static Database.ArrayParam secrets(TenantIntegration integration) {
        return integration.webhookSecrets() == null ? null : Database.array("text", integration.webhookSecrets().toArray());
    }
}
