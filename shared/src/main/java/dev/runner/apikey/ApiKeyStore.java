package dev.runner.apikey;

import dev.runner.store.Database;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The api_keys table: tenant keys by the SHA-256 of the key (the key itself is never stored). */
public final class ApiKeyStore {

    private static final String COLUMNS = "key_id, tenant_id, name, created_at, revoked_at";

    private final Database db;

    public ApiKeyStore(Database db) {
        this.db = db;
    }

    public ApiKey insert(UUID keyId, String tenantId, String name, byte[] keyHash) {
        return db.query("insert into api_keys (key_id, tenant_id, name, key_hash) values (?, ?, ?, ?) returning " + COLUMNS,
                ApiKeyStore::key, keyId, tenantId, name, keyHash).getFirst();
    }

    /** The key with this hash, unless revoked. One indexed statement. */
    public Optional<ApiKey> active(byte[] keyHash) {
        return db.queryOne("select " + COLUMNS + " from api_keys where key_hash = ? and revoked_at is null",
                ApiKeyStore::key, (Object) keyHash);
    }

    /** Where a page of keys ends: the next page starts strictly after (older than) it. */
    public record Position(Instant createdAt, UUID keyId) {}

    /**
     * Up to {@code limit} keys of one tenant, or of every tenant when {@code tenantId} is null; newest first, revoked
     * ones included, older than {@code before} when given. Indexes api_keys_by_tenant_newest and api_keys_newest.
     */
    public List<ApiKey> page(String tenantId, Position before, int limit) {
        return db.query(pageSql(tenantId, before, limit), ApiKeyStore::key);
    }

    /** The statement {@link #page} runs. */
    public static Database.Sql pageSql(String tenantId, Position before, int limit) {
        Instant at = before == null ? null : before.createdAt();
        UUID id = before == null ? null : before.keyId();
        return new Database.Sql("select " + COLUMNS + """
                 from api_keys
                where (?::text is null or tenant_id = ?) and (?::timestamptz is null or (created_at, key_id) < (?, ?))
                order by created_at desc, key_id desc
                limit ?
                """, tenantId, tenantId, at, at, id, limit);
    }

    /** Revokes a key; empty when there is no such key. Revoking twice keeps the first time. */
    public Optional<ApiKey> revoke(UUID keyId) {
        return db.queryOne("update api_keys set revoked_at = coalesce(revoked_at, now()) where key_id = ? returning " + COLUMNS,
                ApiKeyStore::key, keyId);
    }

    private static ApiKey key(ResultSet row) throws SQLException {
        Timestamp revoked = row.getTimestamp(5);
        return new ApiKey(row.getObject(1, UUID.class), row.getString(2), row.getString(3), row.getTimestamp(4).toInstant(),
                revoked == null ? null : revoked.toInstant());
    }
}
