package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.store.Database;

import java.sql.Connection;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Types, tenant integrations, their schedules and paused handlers, in Postgres. */
public final class IntegrationStore {

    private final Database db;

    public IntegrationStore(Database db) {
        this.db = db;
    }

    /** The type's JSON as stored (what the types cache holds), or null. */
    public String typeJson(String integrationKey) {
        return db.queryOne("select integration_key, name, handlers::text from integration_types where integration_key = ?",
                        row -> {
                            var node = Json.object();
                            node.put("integrationKey", row.getString(1));
                            node.put("name", row.getString(2));
                            node.set("handlers", Json.parse(row.getString(3)));
                            return Json.write(node);
                        }, integrationKey)
                .orElse(null);
    }

    public void putType(IntegrationType type) {
        db.update("""
                insert into integration_types (integration_key, name, handlers) values (?, ?, ?)
                on conflict (integration_key) do update set name = excluded.name, handlers = excluded.handlers, updated_at = now()
                """, type.integrationKey(), type.name(), new Database.JsonbParam(Json.write(type.toJson().get("handlers"))));
    }

    public Optional<TenantIntegration> tenantIntegration(String tenantId, String integrationKey) {
        return db.queryOne("""
                select enabled, webhook_secret, settings::text, schedules::text
                from tenant_integrations where tenant_id = ? and integration_key = ?
                """, row -> {
            Map<String, String> schedules = new LinkedHashMap<>();
            Json.parse(row.getString(4)).properties().forEach(e -> schedules.put(e.getKey(), e.getValue().asText()));
            return new TenantIntegration(tenantId, integrationKey, row.getBoolean(1), row.getString(2),
                    Json.parse(row.getString(3)), schedules);
        }, tenantId, integrationKey);
    }

    /**
     * Upserts the tenant integration and replaces its schedules rows in one transaction. A secret
     * left out of the update keeps the stored one (it is write-only, so clients cannot echo it).
     */
    public void putTenantIntegration(TenantIntegration integration, Map<String, Instant> firstFires) {
        db.inTransaction(connection -> {
            var schedules = Json.object();
            integration.schedules().forEach(schedules::put);
            db.update(connection, """
                    insert into tenant_integrations (tenant_id, integration_key, enabled, webhook_secret, settings, schedules)
                    values (?, ?, ?, ?, ?, ?)
                    on conflict (tenant_id, integration_key) do update set
                        enabled = excluded.enabled,
                        webhook_secret = coalesce(excluded.webhook_secret, tenant_integrations.webhook_secret),
                        settings = excluded.settings,
                        schedules = excluded.schedules,
                        updated_at = now()
                    """, integration.tenantId(), integration.integrationKey(), integration.enabled(), integration.webhookSecret(),
                    new Database.JsonbParam(Json.write(integration.settings())), new Database.JsonbParam(Json.write(schedules)));
            replaceSchedules(connection, integration, firstFires);
            return null;
        });
    }

    private void replaceSchedules(Connection connection, TenantIntegration integration, Map<String, Instant> firstFires)
            throws java.sql.SQLException {
        String[] handlers = firstFires.keySet().toArray(String[]::new);
        db.update(connection, """
                delete from schedules where tenant_id = ? and integration_key = ? and not (handler_key = any(?))
                """, integration.tenantId(), integration.integrationKey(), Database.array("text", handlers));
        for (var entry : firstFires.entrySet()) {
            // An unchanged expression keeps its next fire time, so a re-PUT does not shift the schedule.
            db.update(connection, """
                    insert into schedules (tenant_id, integration_key, handler_key, expression, next_fire_at)
                    values (?, ?, ?, ?, ?)
                    on conflict (tenant_id, integration_key, handler_key) do update set
                        next_fire_at = case when schedules.expression = excluded.expression then schedules.next_fire_at else excluded.next_fire_at end,
                        expression = excluded.expression
                    """, integration.tenantId(), integration.integrationKey(), entry.getKey(),
                    integration.schedules().get(entry.getKey()), entry.getValue());
        }
    }
}
