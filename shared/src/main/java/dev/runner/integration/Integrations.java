package dev.runner.integration;

import dev.runner.cache.TypesCache;
import dev.runner.json.Json;

import java.util.Optional;

/** Integration types through the types cache, and tenant integrations. The one door to both. */
public final class Integrations {

    private final IntegrationStore store;
    private final TypesCache cache;

    public Integrations(IntegrationStore store, TypesCache cache) {
        this.store = store;
        this.cache = cache;
    }

    public IntegrationStore store() {
        return store;
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
}
