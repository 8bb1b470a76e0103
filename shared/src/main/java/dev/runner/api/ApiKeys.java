package dev.runner.api;

import dev.runner.apikey.ApiKey;
import dev.runner.apikey.ApiKeyStore;
import dev.runner.apikey.TenantKeys;
import dev.runner.http.ApiRequest;
import dev.runner.store.Ids;

import java.security.MessageDigest;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Who a request comes from: the IAM principal the gateway verified (as whom {@link IamPrincipals}
 * lists it, else no one), the admin bearer key
 * (compared in constant time, never touching Postgres), or a tenant key (found by its SHA-256,
 * one indexed statement, so a revoked key stops working at once). Creates and revokes tenant keys.
 */
final class ApiKeys {

    /** A key just made: {@code secret} is shown this once and kept nowhere. */
    record Created(ApiKey key, String secret) {}

    private static final String BEARER = "Bearer ";

    /** SHA-256 of the admin key, so the comparison takes the same time whatever the presented key's length; null = no admin key. */
    private final byte[] adminKeyDigest;
    private final ApiKeyStore store;
    private final Clock clock;
    private final boolean bearerKeys;
    private final IamPrincipals principals;

    /**
     * @param adminKey   the admin bearer key; null: admin only through IAM
     * @param bearerKeys false when only IAM principals may call (ManagementAuth iam): every bearer key is refused
     * @param principals the IAM principals allowed in, and as whom
     */
    ApiKeys(String adminKey, boolean bearerKeys, IamPrincipals principals, ApiKeyStore store, Clock clock) {
        this.bearerKeys = bearerKeys;
        this.principals = principals;
        this.adminKeyDigest = adminKey == null || adminKey.isBlank() ? null : digest(adminKey);
        this.store = store;
        this.clock = clock;
    }

    /** The caller, or empty when the request carries no key that works. */
    Optional<Caller> authenticate(ApiRequest request) {
        if (request.principal() != null) {
            String principal = request.principal();
            return Optional.of(principals.scope(principal)
                    .<Caller>map(scope -> scope.tenantId() == null ? new Caller.Admin(principal) : new Caller.Tenant(scope.tenantId(), null))
                    .orElse(new Caller.Unlisted(principal)));
        }
        String token = bearerKeys ? bearer(request) : null;
        if (token == null) {
            return Optional.empty();
        }
        if (adminKeyDigest != null && MessageDigest.isEqual(adminKeyDigest, digest(token))) {
            return Optional.of(new Caller.Admin("api-key"));
        }
        if (!TenantKeys.looksLikeKey(token)) {
            return Optional.empty();
        }
        return store.active(TenantKeys.hash(token)).map(key -> new Caller.Tenant(key.tenantId(), key.keyId()));
    }

    Created create(String tenantId, String name) {
        String secret = TenantKeys.generate();
        ApiKey key = store.insert(Ids.next(clock), tenantId, name, TenantKeys.hash(secret));
        return new Created(key, secret);
    }

    List<ApiKey> page(String tenantId, ApiKeyStore.Position before, int limit) {
        return store.page(tenantId, before, limit);
    }

    Optional<ApiKey> revoke(UUID keyId) {
        return store.revoke(keyId);
    }

    private static String bearer(ApiRequest request) {
        String header = request.header("authorization");
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return null;
        }
        String token = header.substring(BEARER.length()).strip();
        return token.isEmpty() ? null : token;
    }

    private static byte[] digest(String key) {
        return TenantKeys.hash(key);
    }
}
