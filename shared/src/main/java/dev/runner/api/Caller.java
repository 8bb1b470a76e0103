package dev.runner.api;

import java.util.UUID;

/** Who is calling the management API, as {@link ApiKeys} established it. */
public sealed interface Caller {

    /**
     * Everything: types, keys, handlers, every tenant.
     *
     * @param principal {@code api-key} for the admin key, else the IAM ARN the gateway verified
     */
    record Admin(String principal) implements Caller {}

    /**
     * One tenant's integrations, runs, items and dead items; nothing shared by every tenant.
     *
     * @param keyId the tenant key's id; null for an IAM principal listed as the tenant's
     */
    record Tenant(String tenantId, UUID keyId) implements Caller {}

    /** An IAM principal the gateway verified that is listed as no one: refused (403) wherever a caller is needed. */
    record Unlisted(String principal) implements Caller {}

    /** Nobody authenticated (public routes only). */
    record Anonymous() implements Caller {}

    /** Whether the caller may see things of {@code tenantId} (null: of no tenant in particular). */
    default boolean sees(String tenantId) {
        return switch (this) {
            case Admin admin -> true;
            case Tenant tenant -> tenantId == null || tenant.tenantId().equals(tenantId);
            case Anonymous anonymous -> false;
            case Unlisted unlisted -> false;
        };
    }

    /**
     * The tenant a list is narrowed to: a tenant key's own, whatever was asked; for the admin, the
     * one asked for (null = every tenant). Check {@link #sees} first.
     */
    default String tenantFilter(String askedTenantId) {
        return this instanceof Tenant tenant ? tenant.tenantId() : askedTenantId;
    }
}
