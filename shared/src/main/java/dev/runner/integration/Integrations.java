package dev.runner.integration;

import dev.runner.cache.TypesCache;
import dev.runner.json.Json;
import dev.runner.schedule.ScheduleExpression;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Integration types through the types cache, and tenant integrations. The one door to both. */
public final class Integrations {

    /** What saving a tenant integration came to. */
    public sealed interface Saved {
        record Ok(TenantIntegration integration) implements Saved {}

        /** The type must exist before a tenant can use it. */
        record UnknownType(String integrationKey) implements Saved {}

        /** The configuration cannot work as given; the message names the field. */
        record Invalid(String message) implements Saved {}
    }

    private final IntegrationStore store;
    private final TypesCache cache;

    public Integrations(IntegrationStore store, TypesCache cache) {
        this.store = store;
        this.cache = cache;
    }

    public Optional<IntegrationType> type(String integrationKey) {
        String json = cache.getOrFetch(integrationKey, () -> store.typeJson(integrationKey));
        return json == null ? Optional.empty() : Optional.of(IntegrationType.fromJson(integrationKey, Json.parse(json)));
    }

    public Optional<HandlerSpec> handler(String integrationKey, String handlerKey) {
        return type(integrationKey).flatMap(type -> type.handler(handlerKey));
    }

    public void putType(IntegrationType type) {
        store.putType(type);
        cache.invalidate(type.integrationKey());
    }

    public Optional<TenantIntegration> tenantIntegration(String tenantId, String integrationKey) {
        return store.tenantIntegration(tenantId, integrationKey);
    }

    /**
     * Saves a tenant integration after checking its schedules: each names a handler of the type and
     * an expression that fires again after {@code now} (its first fire time).
     */
    public Saved putTenantIntegration(TenantIntegration integration, Instant now) {
        Optional<IntegrationType> type = type(integration.integrationKey());
        if (type.isEmpty()) {
            return new Saved.UnknownType(integration.integrationKey());
        }
        Map<String, Instant> firstFires = new LinkedHashMap<>();
        for (var schedule : integration.schedules().entrySet()) {
            String field = "schedules." + schedule.getKey();
            if (type.get().handler(schedule.getKey()).isEmpty()) {
                return new Saved.Invalid(field + ": type " + integration.integrationKey() + " has no such handler");
            }
            Optional<Instant> next;
            try {
                next = ScheduleExpression.parse(schedule.getValue()).nextAfter(now);
            } catch (IllegalArgumentException e) {
                return new Saved.Invalid(field + ": " + e.getMessage());
            }
            if (next.isEmpty()) {
                return new Saved.Invalid(field + ": " + schedule.getValue() + " never fires again");
            }
            firstFires.put(schedule.getKey(), next.get());
        }
        store.putTenantIntegration(integration, firstFires);
        return new Saved.Ok(store.tenantIntegration(integration.tenantId(), integration.integrationKey()).orElseThrow());
    }
}
