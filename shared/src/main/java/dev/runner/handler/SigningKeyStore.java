package dev.runner.handler;

import dev.runner.integration.HandlerRef;
import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The handler_signing_keys table: per handler, the keys Runner signs its calls with. Rotation and retirement run
 * under a lock on the integration type's row, so two admins rotating at once cannot leave three keys signing.
 */
public final class SigningKeyStore {

    /** At most this many keys sign a handler's calls at once: the current one and the one it replaces. */
    public static final int MAX_SIGNING = 2;

    private static final String COLUMNS = "key_id, created_at, retires_at";

    /** A key with its secret, for signing only; the secret is null for {@link SigningKey#GLOBAL}. */
    public record Stored(SigningKey key, String secret) {
        @Override
        public String toString() {
            return "Stored[" + key + ", secret=***]";
        }
    }

    /** What a rotation did. */
    public sealed interface Rotation {
        /** The new key is current; the one it replaces (and, for a handler's first key, the global key) signs until the overlap ends. */
        record Created(SigningKey key, List<SigningKey> keys) implements Rotation {}

        /** Two keys sign already: one must be retired before another rotation. */
        record TooManySigning(List<SigningKey> signing) implements Rotation {}

        /** No such integration type. */
        record UnknownType() implements Rotation {}
    }

    /** What a retirement did. */
    public sealed interface Retirement {
        /** The key signs no more (it may have been retired already). */
        record Retired(SigningKey key) implements Retirement {}

        /** The current key is replaced by a rotation, not retired: retiring it would leave the handler no key. */
        record Current(SigningKey key) implements Retirement {}

        record NotFound() implements Retirement {}
    }

    private final Database db;

    public SigningKeyStore(Database db) {
        this.db = db;
    }

    /**
     * Makes {@code secret} the handler's current key; the key it replaces signs until {@code now + overlap}. A
     * handler's first key opens the same overlap for the deployment-wide key, which signed its calls until now.
     */
    public Rotation rotate(HandlerRef handler, String secret, Duration overlap, Instant now) {
        if (overlap.isNegative()) {
            throw new IllegalArgumentException("overlap < 0: " + overlap);
        }
        return db.inTransaction(connection -> {
            if (!lockType(connection, handler)) {
                return new Rotation.UnknownType();
            }
            List<SigningKey> keys = list(connection, handler);
            List<SigningKey> signing = keys.stream().filter(key -> key.signs(now)).toList();
            if (signing.size() >= MAX_SIGNING) {
                return new Rotation.TooManySigning(signing);
            }
            Instant retiresAt = now.plus(overlap);
            if (keys.isEmpty()) {
                db.update(connection, "insert into handler_signing_keys (integration_key, handler_key, key_id, secret, created_at, retires_at)"
                        + " values (?, ?, ?, null, ?, ?)", handler.integrationKey(), handler.handlerKey(), SigningKey.GLOBAL, now, retiresAt);
            }
            db.update(connection, "update handler_signing_keys set retires_at = ?"
                    + " where integration_key = ? and handler_key = ? and retires_at is null", retiresAt,
                    handler.integrationKey(), handler.handlerKey());
            SigningKey created = db.query(connection, "insert into handler_signing_keys"
                    + " (integration_key, handler_key, key_id, secret, created_at, retires_at) values (?, ?, ?, ?, ?, null) returning " + COLUMNS,
                    SigningKeyStore::key, handler.integrationKey(), handler.handlerKey(), UUID.randomUUID().toString(), secret, now).getFirst();
            return new Rotation.Created(created, list(connection, handler));
        });
    }

    /** Retires a key that is being replaced, at once. */
    public Retirement retire(HandlerRef handler, String keyId, Instant now) {
        return db.inTransaction(connection -> {
            if (!lockType(connection, handler)) {
                return new Retirement.NotFound();
            }
            Optional<SigningKey> found = db.query(connection, "select " + COLUMNS + " from handler_signing_keys"
                    + " where integration_key = ? and handler_key = ? and key_id = ?", SigningKeyStore::key,
                    handler.integrationKey(), handler.handlerKey(), keyId).stream().findFirst();
            if (found.isEmpty()) {
                return new Retirement.NotFound();
            }
            if (found.get().retiresAt() == null) {
                return new Retirement.Current(found.get());
            }
            return new Retirement.Retired(db.query(connection, "update handler_signing_keys set retires_at = least(retires_at, ?)"
                    + " where integration_key = ? and handler_key = ? and key_id = ? returning " + COLUMNS, SigningKeyStore::key,
                    now, handler.integrationKey(), handler.handlerKey(), keyId).getFirst());
        });
    }

    /** The handler's keys, retired ones too, newest first; never a secret. */
    public List<SigningKey> list(HandlerRef handler) {
        return db.query("select " + COLUMNS + " from handler_signing_keys where integration_key = ? and handler_key = ?"
                + " order by retires_at desc nulls first, created_at desc, key_id", SigningKeyStore::key, handler.integrationKey(), handler.handlerKey());
    }

    /** The handler's keys with their secrets, retired ones too (they tell that the handler has left the global key), newest first. */
    public List<Stored> stored(HandlerRef handler) {
        return db.query("select " + COLUMNS + ", secret from handler_signing_keys where integration_key = ? and handler_key = ?"
                + " order by retires_at desc nulls first, created_at desc, key_id", row -> new Stored(key(row), row.getString(4)),
                handler.integrationKey(), handler.handlerKey());
    }

    private List<SigningKey> list(Connection connection, HandlerRef handler) throws SQLException {
        return db.query(connection, "select " + COLUMNS + " from handler_signing_keys where integration_key = ? and handler_key = ?"
                + " order by retires_at desc nulls first, created_at desc, key_id", SigningKeyStore::key, handler.integrationKey(), handler.handlerKey());
    }

    /** Locks the type's row for this transaction; false when there is no such type. */
    private boolean lockType(Connection connection, HandlerRef handler) throws SQLException {
        return !db.query(connection, "select 1 from integration_types where integration_key = ? for no key update",
                row -> row.getInt(1), handler.integrationKey()).isEmpty();
    }

    private static SigningKey key(ResultSet row) throws SQLException {
        Timestamp retires = row.getTimestamp(3);
        return new SigningKey(row.getString(1), row.getTimestamp(2).toInstant(), retires == null ? null : retires.toInstant());
    }
}
