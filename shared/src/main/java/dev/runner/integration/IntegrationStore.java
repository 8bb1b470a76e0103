package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;

import java.sql.Array;
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

    /** Who saves a tenant integration: the operator (the admin) or the tenant (a key of its own). */
    public enum Writer { OPERATOR, TENANT }

    /** What a save came to. */
    public enum Outcome {
        SAVED,
        /** The tenant asked to enable what the operator disabled: nothing changed. */
        DISABLED_BY_OPERATOR,
        /** The tenant asked for a new tenant integration of a type only the operator subscribes tenants to: nothing changed. */
        NOT_OPEN_TO_TENANTS
    }

    /** A tenant integration as the management API shows it: with its secrets, and whether the operator disabled it. */
    public record Stored(TenantIntegration integration, boolean disabledByOperator) {}

    private final Database db;
    private final ScheduleStore schedules;

    public IntegrationStore(Database db, ScheduleStore schedules) {
        this.db = db;
        this.schedules = schedules;
    }

    /** The type's JSON as stored (what the types cache holds), or null. */
    public String typeJson(String integrationKey) {
        return db.queryOne("""
                        select integration_key, name, handlers::text, webhook_scheme, open_to_tenants
                        from integration_types where integration_key = ?
                        """, row -> {
                            var node = Json.object();
                            node.put("integrationKey", row.getString(1));
                            node.put("name", row.getString(2));
                            node.set("handlers", Json.parse(row.getString(3)));
                            node.put("webhookScheme", row.getString(4));
                            node.put("openToTenants", row.getBoolean(5));
                            return Json.write(node);
                        }, integrationKey)
                .orElse(null);
    }

    public void putType(IntegrationType type) {
        db.update("""
                insert into integration_types (integration_key, name, handlers, webhook_scheme, open_to_tenants) values (?, ?, ?, ?, ?)
                on conflict (integration_key) do update set name = excluded.name, handlers = excluded.handlers,
                    webhook_scheme = excluded.webhook_scheme, open_to_tenants = excluded.open_to_tenants, updated_at = now()
                """, type.integrationKey(), type.name(), new Database.JsonbParam(Json.write(type.toJson().get("handlers"))),
                type.webhookScheme().wireName(), type.openToTenants());
    }

    /**
     * The tenant integration without its webhook secrets ({@code webhookSecrets} null): what the workers and the
     * scheduler read, whose database roles may not read the secrets (R__runtime_roles.sql).
     */
    public Optional<TenantIntegration> tenantIntegration(String tenantId, String integrationKey) {
        return db.queryOne("""
                select tenant_id, integration_key, enabled, null::text[], settings::text, schedules::text, weight
                from tenant_integrations where tenant_id = ? and integration_key = ?
                """, IntegrationStore::tenantIntegration, tenantId, integrationKey);
    }

    /** The tenant integrations of {@code keys} that exist, without their webhook secrets, in one statement. */
    public Map<Integrations.TenantKey, TenantIntegration> tenantIntegrations(Collection<Integrations.TenantKey> keys) {
        return tenantIntegrations(keys, "null::text[]");
    }

    /** The same with their webhook secrets: for the ingest function's checks, whose role may read them. */
    public Map<Integrations.TenantKey, TenantIntegration> tenantIntegrationsWithSecrets(Collection<Integrations.TenantKey> keys) {
        return tenantIntegrations(keys, "t.webhook_secrets");
    }

    /** @param secrets the secrets column, or {@code null::text[]} for a role that may not read it (a constant here, never input) */
    private Map<Integrations.TenantKey, TenantIntegration> tenantIntegrations(Collection<Integrations.TenantKey> keys, String secrets) {
        Map<Integrations.TenantKey, TenantIntegration> found = new HashMap<>();
        db.query("select t.tenant_id, t.integration_key, t.enabled, " + secrets + """
                , t.settings::text, t.schedules::text, t.weight
                from tenant_integrations t join unnest(?::text[], ?::text[]) as k(tenant_id, integration_key)
                    on t.tenant_id = k.tenant_id and t.integration_key = k.integration_key
                """, row -> found.put(new Integrations.TenantKey(row.getString(1), row.getString(2)), tenantIntegration(row)),
                Database.array("text", keys.stream().map(Integrations.TenantKey::tenantId).toArray()),
                Database.array("text", keys.stream().map(Integrations.TenantKey::integrationKey).toArray()));
        return found;
    }

    /** The tenant integration with its webhook secrets: for the webhook and ingest checks, and the management API. */
    public Optional<Stored> stored(String tenantId, String integrationKey) {
        return db.queryOne("""
                select tenant_id, integration_key, enabled, webhook_secrets, settings::text, schedules::text, weight, operator_disabled
                from tenant_integrations where tenant_id = ? and integration_key = ?
                """, row -> new Stored(tenantIntegration(row), row.getBoolean(8)), tenantId, integrationKey);
    }

    /** From the columns tenant_id, integration_key, enabled, webhook_secrets (null when not read), settings, schedules, weight. */
    private static TenantIntegration tenantIntegration(ResultSet row) throws SQLException {
        Map<String, String> schedules = new LinkedHashMap<>();
        Json.parse(row.getString(6)).properties().forEach(e -> schedules.put(e.getKey(), e.getValue().asText()));
        Array secrets = row.getArray(4);
        return new TenantIntegration(row.getString(1), row.getString(2), row.getBoolean(3),
                secrets == null ? null : List.of((String[]) secrets.getArray()), Json.parse(row.getString(5)), schedules, row.getInt(7));
    }

    /**
     * Upserts the tenant integration and replaces its schedules rows in one transaction. Secrets
     * left out of the update (null) keep the stored ones (they are write-only, so clients cannot echo them).
     * The operator's save records whether the operator disabled it; the tenant's may not enable what the operator
     * disabled, nor create one when {@code mayCreate} is false (its type is not open to tenants). The statement's
     * own conditions decide, so an operator's save cannot slip between a check and the tenant's write.
     */
    public Outcome putTenantIntegration(TenantIntegration integration, Map<String, Instant> firstFires, Writer writer, boolean mayCreate) {
        boolean byOperator = writer == Writer.OPERATOR;
        var schedulesJson = Json.object();
        integration.schedules().forEach(schedulesJson::put);
        var settings = new Database.JsonbParam(Json.write(integration.settings()));
        var schedulesParam = new Database.JsonbParam(Json.write(schedulesJson));
        return db.inTransaction(connection -> {
            int saved = mayCreate
                    ? db.update(connection, """
                        insert into tenant_integrations as t (tenant_id, integration_key, enabled, webhook_secrets, settings, schedules,
                                                              operator_disabled, weight)
                        values (?, ?, ?, coalesce(?::text[], '{}'), ?, ?, ?, coalesce(?::int, 1))
                        on conflict (tenant_id, integration_key) do update set
                            enabled = excluded.enabled,
                            webhook_secrets = case when ?::text[] is null then t.webhook_secrets else excluded.webhook_secrets end,
                            settings = excluded.settings,
                            schedules = excluded.schedules,
                            operator_disabled = case when ? then excluded.operator_disabled else t.operator_disabled end,
                            weight = coalesce(?::int, t.weight),
                            updated_at = now()
                        where ? or not (t.operator_disabled and excluded.enabled)
                        """, integration.tenantId(), integration.integrationKey(), integration.enabled(), secrets(integration),
                        settings, schedulesParam, byOperator && !integration.enabled(), integration.weight(), secrets(integration), byOperator,
                        integration.weight(), byOperator)
                    : db.update(connection, """
                        update tenant_integrations t set enabled = ?, webhook_secrets = coalesce(?::text[], t.webhook_secrets),
                            settings = ?, schedules = ?,
                            operator_disabled = case when ? then ? else t.operator_disabled end,
                            weight = coalesce(?::int, t.weight),
                            updated_at = now()
                        where t.tenant_id = ? and t.integration_key = ? and (? or not (t.operator_disabled and ?))
                        """, integration.enabled(), secrets(integration), settings, schedulesParam, byOperator,
                        byOperator && !integration.enabled(), integration.weight(), integration.tenantId(), integration.integrationKey(),
                        byOperator, integration.enabled());
            if (saved == 0) {
                boolean exists = !db.query(connection, "select 1 from tenant_integrations where tenant_id = ? and integration_key = ?",
                        row -> 1, integration.tenantId(), integration.integrationKey()).isEmpty();
                return exists ? Outcome.DISABLED_BY_OPERATOR : Outcome.NOT_OPEN_TO_TENANTS;
            }
            schedules.replace(connection, integration.tenantId(), integration.integrationKey(), integration.schedules(), firstFires);
            return Outcome.SAVED;
        });
    }

    private static Database.ArrayParam secrets(TenantIntegration integration) {
        return integration.webhookSecrets() == null ? null : Database.array("text", integration.webhookSecrets().toArray());
    }
}
