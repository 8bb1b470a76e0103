package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.store.Database;

import java.util.Arrays;
import java.util.List;

/** Reads of types and tenant integrations for the management API's overviews; the pipeline never uses them. */
public final class IntegrationQueries {

    /** A tenant: whoever has at least one tenant integration. */
    public record Tenant(String tenantId, List<String> integrationKeys) {}

    private final Database db;

    public IntegrationQueries(Database db) {
        this.db = db;
    }

    /** Every integration type, by key. One statement (the table holds one row per type). */
    public List<IntegrationType> types() {
        return db.query("select integration_key, name, handlers::text, webhook_scheme from integration_types order by integration_key", row -> {
            var node = Json.object();
            node.put("name", row.getString(2));
            node.set("handlers", Json.parse(row.getString(3)));
            node.put("webhookScheme", row.getString(4));
            return IntegrationType.fromJson(row.getString(1), node);
        });
    }

    /**
     * Tenants by id after {@code afterTenantId} (keyset), or only {@code onlyTenantId} when given.
     * The primary key (tenant_id, integration_key) serves the order.
     */
    public List<Tenant> tenants(String onlyTenantId, String afterTenantId, int limit) {
        return db.query(tenantsSql(onlyTenantId, afterTenantId, limit),
                row -> new Tenant(row.getString(1), Arrays.asList((String[]) row.getArray(2).getArray())));
    }

    /** The statement {@link #tenants} runs. */
    public static Database.Sql tenantsSql(String onlyTenantId, String afterTenantId, int limit) {
        return new Database.Sql("""
                select tenant_id, array_agg(integration_key order by integration_key)
                from tenant_integrations
                where (?::text is null or tenant_id = ?) and (?::text is null or tenant_id > ?)
                group by tenant_id
                order by tenant_id
                limit ?
                """, onlyTenantId, onlyTenantId, afterTenantId, afterTenantId, limit);
    }
}
