package dev.runner.run;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Idempotency keys of POST /runs (table run_requests), per tenant, kept for a window: a retried
 * request is answered with the run its first attempt made, never a second run.
 */
public final class RunRequestStore {

    /** What a key meant when a request claimed it. */
    public sealed interface Claim {
        /** The key is new (or its window passed): the request makes its run. */
        record Fresh() implements Claim {}

        /** The key's first request asked for the same thing: answer with its run. */
        record Replay(UUID runId) implements Claim {}

        /** The key was used for another request: refuse, do not guess which one the client meant. */
        record Conflict(UUID runId) implements Claim {}
    }

    private final Database db;
    private final Duration window;

    /** @param window how long a key is kept: a request within it with the same key makes no second run */
    public RunRequestStore(Database db, Duration window) {
        this.db = db;
        this.window = window;
    }

    public Duration window() {
        return window;
    }

    /**
     * Claims {@code key} for the run {@code runId} about to be stored in the same transaction. A
     * concurrent request with the same key waits on the first one's row (the primary key) until it
     * commits, then sees its run: two requests with one key never make two runs.
     */
    public Claim claim(Connection connection, String tenantId, String key, String fingerprint, UUID runId) throws SQLException {
        List<UUID> inserted = db.query(connection, """
                insert into run_requests (tenant_id, idempotency_key, fingerprint, run_id) values (?, ?, ?, ?)
                on conflict (tenant_id, idempotency_key) do update
                    set fingerprint = excluded.fingerprint, run_id = excluded.run_id, created_at = now()
                    where run_requests.created_at < now() - make_interval(secs => ?)
                returning run_id
                """, row -> row.getObject(1, UUID.class), tenantId, key, fingerprint, runId, (double) window.toSeconds());
        if (!inserted.isEmpty()) {
            return new Claim.Fresh();
        }
        return db.query(connection, "select fingerprint, run_id from run_requests where tenant_id = ? and idempotency_key = ?",
                        row -> {
                            UUID first = row.getObject(2, UUID.class);
                            return fingerprint.equals(row.getString(1)) ? (Claim) new Claim.Replay(first) : new Claim.Conflict(first);
                        }, tenantId, key)
                .getFirst();
    }

    /** Forgets keys older than the window. Returns how many. */
    public int purge(int limit) {
        return db.update("""
                delete from run_requests where ctid in (
                    select ctid from run_requests where created_at < now() - make_interval(secs => ?) limit ?)
                """, (double) window.toSeconds(), limit);
    }
}
