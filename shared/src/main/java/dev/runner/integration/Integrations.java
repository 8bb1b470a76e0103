package dev.runner.integration;

import com.github.benmanes.caffeine.cache.Cache;
import dev.runner.cache.Caches;
import dev.runner.cache.LookupCache;
import dev.runner.cache.TypesCache;
import dev.runner.json.Json;
import dev.runner.schedule.ScheduleExpression;
import dev.runner.security.StandardWebhooks;
import dev.runner.security.WebhookScheme;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Integration types through the types cache, and tenant integrations. The one door to both. */
public final class Integrations {

    /** What saving a tenant integration came to. */
    public sealed interface Saved {
        record Ok(TenantIntegration integration, boolean disabledByOperator) implements Saved {}

        /** A tenant asked to enable what the operator disabled; only the operator enables it again. */
        record DisabledByOperator(String integrationKey) implements Saved {}

        /** A tenant asked to subscribe to a type only the operator subscribes tenants to. */
        record NotOpenToTenants(String integrationKey) implements Saved {}

        /** The type must exist before a tenant can use it. */
        record UnknownType(String integrationKey) implements Saved {}

        /** The configuration cannot work as given; the message names the field. */
        record Invalid(String message) implements Saved {}
    }

    /** Tenant integrations held in process, and parsed types. */
    private static final int MAX_TENANT_ENTRIES = 10_000;
    /**
     * Absent tenant integrations held in process, apart from the found ones: a flood of unknown
     * tenants evicts only other unknown ones.
     */
    private static final int MAX_ABSENT_TENANT_ENTRIES = 1_000;

    /** A tenant integration's key. */
    public record TenantKey(String tenantId, String integrationKey) {}

    private record Parsed(String json, IntegrationType type) {}

    private final IntegrationStore store;
    private final TypesCache cache;
    private final LookupCache<TenantKey, TenantIntegration> tenants;
    private final LookupCache<TenantKey, TenantIntegration> tenantsWithSecrets;
    private final Cache<String, Parsed> parsedTypes = Caches.bounded(MAX_TENANT_ENTRIES);

    /** @param tenantTtl how long {@link #tenantIntegrationCached} trusts what it read (misses included) */
    public Integrations(IntegrationStore store, TypesCache cache, Duration tenantTtl, Clock clock) {
        this.store = store;
        this.cache = cache;
        this.tenants = new LookupCache<>(tenantTtl, MAX_TENANT_ENTRIES, MAX_ABSENT_TENANT_ENTRIES, clock);
        this.tenantsWithSecrets = new LookupCache<>(tenantTtl, MAX_TENANT_ENTRIES, MAX_ABSENT_TENANT_ENTRIES, clock);
    }

    public Optional<IntegrationType> type(String integrationKey) {
        String json = cache.getOrFetch(integrationKey, () -> store.typeJson(integrationKey));
        return json == null ? Optional.empty() : Optional.of(parsed(integrationKey, json));
    }

    /**
     * The type the cached JSON describes, parsed once per JSON: every item batch asks for its
     * handlers, and parsing the type each time was a noticeable share of an item worker's CPU.
     */
    private IntegrationType parsed(String integrationKey, String json) {
        Parsed last = parsedTypes.getIfPresent(integrationKey);
        if (last != null && last.json().equals(json)) {
            return last.type();
        }
        IntegrationType type = IntegrationType.fromJson(integrationKey, Json.parse(json));
        parsedTypes.put(integrationKey, new Parsed(json, type));
        return type;
    }

    public Optional<HandlerSpec> handler(String integrationKey, String handlerKey) {
        return type(integrationKey).flatMap(type -> type.handler(handlerKey));
    }

    /**
     * The handler, re-reading its type from Postgres when the cached type lacks it: a handler just
     * added to a type must not be taken for unknown (and its items sent to the DLQ) on a stale cache.
     */
    public Optional<HandlerSpec> handlerOrRefresh(String integrationKey, String handlerKey) {
        Optional<HandlerSpec> cached = handler(integrationKey, handlerKey);
        if (cached.isPresent()) {
            return cached;
        }
        String json = cache.refresh(integrationKey, () -> store.typeJson(integrationKey));
        return json == null ? Optional.empty() : parsed(integrationKey, json).handler(handlerKey);
    }

    public void putType(IntegrationType type) {
        store.putType(type);
        cache.invalidate(type.integrationKey());
    }

    /** The tenant integration without its webhook secrets (null): all the workers, the scheduler and runs need. */
    public Optional<TenantIntegration> tenantIntegration(String tenantId, String integrationKey) {
        return store.tenantIntegration(tenantId, integrationKey);
    }

    /** The tenant integration with its secrets, and whether the operator disabled it: the management API's view. */
    public Optional<IntegrationStore.Stored> stored(String tenantId, String integrationKey) {
        return store.stored(tenantId, integrationKey);
    }

    /**
     * The tenant integration (without its secrets) as read at most {@code tenantTtl} ago, absent ones too: for hot
     * paths (the item worker's enabled check) that would otherwise ask Postgres on every call. A change reaches them
     * within the TTL.
     */
    public Optional<TenantIntegration> tenantIntegrationCached(String tenantId, String integrationKey) {
        return tenants.get(new TenantKey(tenantId, integrationKey), key -> store.tenantIntegration(key.tenantId(), key.integrationKey()));
    }

    /**
     * As {@link #tenantIntegrationCached}, with the webhook secrets: for the checks of webhooks and signed ingest
     * messages, whose database roles may read them.
     */
    public Optional<TenantIntegration> tenantIntegrationWithSecretsCached(String tenantId, String integrationKey) {
        return tenantsWithSecrets.get(new TenantKey(tenantId, integrationKey),
                key -> store.stored(key.tenantId(), key.integrationKey()).map(IntegrationStore.Stored::integration));
    }

    /**
     * As {@link #tenantIntegrationCached} for several at once: the ones not cached are read with one statement, so a batch of items or ingest
     * messages from many tenants costs one lookup, not one per tenant.
     */
    public Map<TenantKey, Optional<TenantIntegration>> tenantIntegrationsCached(Collection<TenantKey> keys) {
        return tenants.getAll(keys, missing -> store.tenantIntegrations(missing));
    }

    /** As {@link #tenantIntegrationWithSecretsCached} for several at once: the ones not cached are read with one statement. */
    public Map<TenantKey, Optional<TenantIntegration>> tenantIntegrationsWithSecretsCached(Collection<TenantKey> keys) {
        return tenantsWithSecrets.getAll(keys, missing -> store.tenantIntegrationsWithSecrets(missing));
    }

    /** Under Standard Webhooks a {@code whsec_} secret is base64 and must decode; the message never holds the secret. */
    private static String unusableSecret(IntegrationType type, TenantIntegration integration) {
        if (type.webhookScheme() != WebhookScheme.STANDARD || integration.webhookSecrets() == null) {
            return null;
        }
        for (int i = 0; i < integration.webhookSecrets().size(); i++) {
            try {
                StandardWebhooks.requireUsable(integration.webhookSecrets().get(i));
            } catch (IllegalArgumentException e) {
                return "webhookSecrets[" + i + "]: " + e.getMessage();
            }
        }
        return null;
    }

    /**
     * Saves a tenant integration after checking its secrets against the type's webhook scheme and its schedules: each names a handler of the type and
     * an expression that fires again after {@code now} (its first fire time). A tenant ({@code writer} TENANT) may not
     * enable what the operator disabled, nor subscribe to a type the operator did not open to tenants.
     */
    public Saved putTenantIntegration(TenantIntegration integration, Instant now, IntegrationStore.Writer writer) {
        Optional<IntegrationType> type = type(integration.integrationKey());
        if (type.isEmpty()) {
            return new Saved.UnknownType(integration.integrationKey());
        }
        String unusable = unusableSecret(type.get(), integration);
        if (unusable != null) {
            return new Saved.Invalid(unusable);
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
        boolean mayCreate = writer == IntegrationStore.Writer.OPERATOR || type.get().openToTenants();
        switch (store.putTenantIntegration(integration, firstFires, writer, mayCreate)) {
            case DISABLED_BY_OPERATOR -> {
                return new Saved.DisabledByOperator(integration.integrationKey());
            }
            case NOT_OPEN_TO_TENANTS -> {
                return new Saved.NotOpenToTenants(integration.integrationKey());
            }
            case SAVED -> {
                TenantKey key = new TenantKey(integration.tenantId(), integration.integrationKey());
                tenants.invalidate(key);
                tenantsWithSecrets.invalidate(key);
            }
        }
        IntegrationStore.Stored saved = store.stored(integration.tenantId(), integration.integrationKey()).orElseThrow();
        return new Saved.Ok(saved.integration(), saved.disabledByOperator());
    }
}
