package dev.runner.bulk;

import dev.runner.json.Json;
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
 * The bulk_actions table: an action's target, what it will do and has done, and where its next page starts. A page
 * locks its action's row first (SKIP LOCKED), so two ticks, or a tick and the request that asked, never page one
 * action at once.
 */
public final class BulkActionStore {

    private static final String COLUMNS = """
            action_id, kind, target::text, tenant_id, status, total, done, asked_at, cursor_id, cursor_at, cursor_status, updated_at, finished_at
            """;

    /** Where a page of actions ends: the next page starts strictly after (older than) it. */
    public record Position(Instant askedAt, UUID actionId) {}

    private final Database db;

    public BulkActionStore(Database db) {
        this.db = db;
    }

    /**
     * Records a running action for {@code target}, or finds the one already running for it (asking twice is answered
     * with the first), locked for the caller's transaction either way.
     *
     * @return the action, and whether this call created it
     */
    public Opened open(Connection connection, UUID actionId, BulkAction.Target target, String tenantId, long total) throws SQLException {
        List<BulkAction> created = db.query(connection, """
                insert into bulk_actions (action_id, kind, target, tenant_id, target_key, status, total)
                values (?, ?, ?::jsonb, ?, ?, 'running', ?)
                on conflict (target_key) where status = 'running' do nothing
                returning\s""" + COLUMNS, BulkActionStore::action,
                actionId, BulkAction.kind(target), Json.write(BulkAction.targetJson(target)), tenantId, BulkAction.targetKey(target), total);
        if (!created.isEmpty()) {
            return new Opened(created.getFirst(), true);
        }
        List<BulkAction> running = db.query(connection, "select " + COLUMNS + " from bulk_actions where target_key = ? and status = 'running'"
                + " for update", BulkActionStore::action, BulkAction.targetKey(target));
        if (running.isEmpty()) {
            // It finished between the insert and this read: what it did is what this ask gets.
            throw new SQLException("a bulk action finished while another like it was asked for; ask again", "40001");
        }
        return new Opened(running.getFirst(), false);
    }

    /** What {@link #open} came to. */
    public record Opened(BulkAction action, boolean created) {}

    /** The running action, locked for the caller's transaction; empty when it is done or another transaction pages it now. */
    public Optional<BulkAction> lock(Connection connection, UUID actionId) throws SQLException {
        return db.query(connection, "select " + COLUMNS + " from bulk_actions where action_id = ? and status = 'running'"
                + " for update skip locked", BulkActionStore::action, actionId).stream().findFirst();
    }

    /** The running action paged longest ago that no other transaction pages now, locked; empty when there is none. Index bulk_actions_to_continue. */
    public Optional<BulkAction> lockNext(Connection connection) throws SQLException {
        return db.query(connection, "select " + COLUMNS + " from bulk_actions where status = 'running'"
                + " order by updated_at limit 1 for update skip locked", BulkActionStore::action).stream().findFirst();
    }

    /** Records a page: {@code did} more done, the next page's start, and whether that was the last page. */
    public BulkAction advance(Connection connection, UUID actionId, long did, BulkAction.Cursor next, boolean last) throws SQLException {
        return db.query(connection, """
                update bulk_actions set done = done + ?, cursor_id = ?, cursor_at = ?, cursor_status = ?, updated_at = now(),
                    status = case when ? then 'done' else status end, finished_at = case when ? then now() else finished_at end
                where action_id = ?
                returning\s""" + COLUMNS, BulkActionStore::action,
                did, next.itemId(), next.at(), next.status(), last, last, actionId).getFirst();
    }

    public Optional<BulkAction> find(UUID actionId) {
        return db.queryOne("select " + COLUMNS + " from bulk_actions where action_id = ?", BulkActionStore::action, actionId);
    }

    /** Up to {@code limit} actions of one tenant, or of all when null, newest first, before {@code before} when given. */
    public List<BulkAction> page(String tenantId, Position before, int limit) {
        return db.query(pageSql(tenantId, before, limit), BulkActionStore::action);
    }

    /** The statement {@link #page} runs: indexes bulk_actions_by_tenant and bulk_actions_newest. */
    public static Database.Sql pageSql(String tenantId, Position before, int limit) {
        Instant at = before == null ? null : before.askedAt();
        UUID id = before == null ? null : before.actionId();
        return new Database.Sql("select " + COLUMNS + """
                 from bulk_actions
                where (?::text is null or tenant_id = ?) and (?::timestamptz is null or (asked_at, action_id) < (?, ?))
                order by asked_at desc, action_id desc
                limit ?
                """, tenantId, tenantId, at, at, id, limit);
    }

    /** Forgets at most {@code limit} actions finished more than {@code olderThan} ago; returns how many. Index bulk_actions_finished. */
    public int forget(Duration olderThan, int limit) {
        return db.update("""
                delete from bulk_actions where action_id = any(array(
                    select action_id from bulk_actions where finished_at < now() - make_interval(secs => ?) order by finished_at limit ?))
                """, (double) olderThan.toSeconds(), limit);
    }

    private static BulkAction action(ResultSet row) throws SQLException {
        return new BulkAction(row.getObject(1, UUID.class), BulkAction.target(row.getString(2), Json.parse(row.getString(3))),
                row.getString(4), BulkAction.Status.valueOf(row.getString(5).toUpperCase(java.util.Locale.ROOT)),
                row.getLong(6), row.getLong(7), instant(row.getTimestamp(8)),
                new BulkAction.Cursor(row.getObject(9, UUID.class), instant(row.getTimestamp(10)), row.getString(11)),
                instant(row.getTimestamp(12)), instant(row.getTimestamp(13)));
    }

    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toInstant();
    }
}
