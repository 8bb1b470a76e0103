package dev.runner.item;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.integration.HandlerRef;
import dev.runner.json.Json;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Reads of execution_items for the management API (lists, counts, the charts); the pipeline never
 * uses them. Every method is one statement, on an index that serves it (named at each method).
 */
public final class ItemQueries {

    /**
     * Where a page ends. Dead items are ordered by (dlq_at, item_id), others by item_id alone
     * (ids are UUIDv7, so that is creation order), both newest first.
     *
     * @param dlqAt set for dead items only
     */
    public record Position(Instant dlqAt, UUID itemId) {}

    /** An item with its run and handler, and its payload when asked for. */
    public record ItemDetail(UUID runId, String tenantId, String integrationKey, String handlerKey,
                             ItemView item, JsonNode payload) {}

    /** What the charts count per minute. */
    public enum Outcome {
        SUCCEEDED, RETRIED, DEAD
    }

    public record MinuteCount(Instant minute, Outcome outcome, long count) {}

    /** Items waiting on a tier (queued or retrying) and when the longest-waiting one was last touched. */
    public record Waiting(long items, Instant oldestTouchedAt) {}

    private static final String DETAIL_COLUMNS = """
            item_id, external_id, status, attempts, last_error, history::text, dlq_at, updated_at,
            run_id, tenant_id, integration_key, handler_key, superseded_by, record_wait_since, pending_since
            """;

    private final Database db;

    public ItemQueries(Database db) {
        this.db = db;
    }

    /** Items of each run counted by status (a run without items is absent). Index execution_items_by_status. */
    public Map<UUID, Map<ItemStatus, Long>> countsByRun(Collection<UUID> runIds) {
        Map<UUID, Map<ItemStatus, Long>> counts = new HashMap<>();
        if (runIds.isEmpty()) {
            return counts;
        }
        db.query("select run_id, status, count(*) from execution_items where run_id = any(?) group by run_id, status",
                row -> counts.computeIfAbsent(row.getObject(1, UUID.class), id -> new EnumMap<>(ItemStatus.class))
                        .put(ItemStatus.fromWire(row.getString(2)), row.getLong(3)),
                Database.array("uuid", runIds.toArray()));
        return counts;
    }

    /**
     * A page of items in one status across runs, newest first, after {@code after} when given: of a tenant (index
     * execution_items_by_tenant) or a run (execution_items_by_status); dead items of any filter in death order
     * (execution_items_dead_by_tenant, _by_run, _by_handler, or execution_items_dead across everything). Items of
     * another status across every tenant and run are not listed: no index holds them in order, and the route asks
     * for a tenant or a run instead.
     */
    public List<ItemDetail> page(ItemStatus status, ItemFilter filter, Position after, int limit) {
        return db.query(pageSql(status, filter, after, limit), row -> detail(row, null));
    }

    /** Whether {@link #page} can list {@code status} with {@code filter} from an index: dead items always, others of a tenant or a run. */
    public static boolean listable(ItemStatus status, ItemFilter filter) {
        return status == ItemStatus.DEAD || filter.tenantId() != null || filter.runId() != null;
    }

    /** The statement {@link #page} runs. */
    public static Database.Sql pageSql(ItemStatus status, ItemFilter filter, Position after, int limit) {
        if (!listable(status, filter)) {
            throw new IllegalArgumentException(status.wireName() + " items are listed for a tenant or a run only");
        }
        Object[] filters = {filter.tenantId(), filter.tenantId(), filter.integrationKey(), filter.integrationKey(),
                filter.handlerKey(), filter.handlerKey(), filter.runId(), filter.runId()};
        String where = """
                  and (?::text is null or tenant_id = ?)
                  and (?::text is null or integration_key = ?)
                  and (?::text is null or handler_key = ?)
                  and (?::uuid is null or run_id = ?)
                """;
        List<Object> params = new ArrayList<>(List.of(status.wireName()));
        params.addAll(Arrays.asList(filters));
        if (status == ItemStatus.DEAD) {
            Instant at = after == null ? null : after.dlqAt();
            params.addAll(Arrays.asList(at, at, after == null ? null : after.itemId(), limit));
            return new Database.Sql("select " + DETAIL_COLUMNS + "from execution_items where status = ?\n" + where + """
                      and (?::timestamptz is null or (dlq_at, item_id) < (?, ?))
                    order by dlq_at desc, item_id desc
                    limit ?
                    """, params.toArray());
        }
        UUID id = after == null ? null : after.itemId();
        params.addAll(Arrays.asList(id, id, limit));
        return new Database.Sql("select " + DETAIL_COLUMNS + "from execution_items where status = ?\n" + where + """
                  and (?::uuid is null or item_id < ?)
                order by item_id desc
                limit ?
                """, params.toArray());
    }

    /** One item with its payload. Primary key. */
    public Optional<ItemDetail> find(UUID itemId) {
        return db.queryOne("select " + DETAIL_COLUMNS + ", payload::text from execution_items where item_id = ?",
                row -> detail(row, row.getString(16) == null ? null : Json.parse(row.getString(16))), itemId);
    }

    /** Parked items (waiting for a resume) per handler. Index execution_items_parked_by_handler. */
    public Map<HandlerRef, Long> parkedByHandler() {
        Map<HandlerRef, Long> parked = new HashMap<>();
        db.query("select integration_key, handler_key, count(*) from execution_items where status = 'parked' group by 1, 2",
                row -> parked.put(new HandlerRef(row.getString(1), row.getString(2)), row.getLong(3)));
        return parked;
    }

    /**
     * Items waiting on each items tier: queued (visible or delayed in SQS) or retrying (invisible
     * for their backoff), by their run's trigger. Reads every waiting item (the partial index
     * execution_items_waiting finds them), so it costs in proportion to the backlog: an operator's
     * view, not something to poll in a loop.
     */
    public Map<Trigger, Waiting> waitingByTrigger() {
        Map<Trigger, Waiting> waiting = new EnumMap<>(Trigger.class);
        db.query("""
                select r.trigger, count(*), min(e.updated_at)
                from execution_items e join runs r on r.run_id = e.run_id
                where e.status in ('queued', 'retrying')
                group by r.trigger
                """, row -> waiting.put(Trigger.fromWire(row.getString(1)), new Waiting(row.getLong(2), row.getTimestamp(3).toInstant())));
        return waiting;
    }

    /**
     * Outcomes per whole minute since {@code since}: successes by finished_at, deaths by dlq_at,
     * retries by the time in each failed attempt's history entry (a dead item's last entry is its
     * death, not a retry). Only items that can hold such a time are read: those succeeded or dead
     * since then (indexes execution_items_finished and execution_items_dead) and those still open
     * that failed (execution_items_open_retried); of the succeeded ones only those that failed first
     * (execution_items_retried_succeeded). One statement, reading O(items finished in the window).
     */
    public List<MinuteCount> perMinute(Instant since) {
        return db.query("""
                with touched as (
                    select status, history from execution_items
                    where status = 'succeeded' and finished_at >= ? and history <> '[]'::jsonb
                    union all
                    select status, history from execution_items where status = 'dead' and dlq_at >= ?
                    union all
                    select status, history from execution_items
                    where status not in ('succeeded', 'dead', 'cancelled') and history <> '[]'::jsonb
                ), failures as (
                    select (h.entry ->> 'at')::timestamptz as at
                    from touched t cross join lateral jsonb_array_elements(t.history) with ordinality as h(entry, n)
                    where not (t.status = 'dead' and h.n = jsonb_array_length(t.history))
                )
                select 'SUCCEEDED', date_trunc('minute', finished_at), count(*) from execution_items
                where status = 'succeeded' and finished_at >= ? group by 2
                union all
                select 'DEAD', date_trunc('minute', dlq_at), count(*) from execution_items
                where status = 'dead' and dlq_at >= ? group by 2
                union all
                select 'RETRIED', date_trunc('minute', at), count(*) from failures where at >= ? group by 2
                """, row -> new MinuteCount(row.getTimestamp(2).toInstant(), Outcome.valueOf(row.getString(1)), row.getLong(3)),
                since, since, since, since, since);
    }

    private static ItemDetail detail(ResultSet row, JsonNode payload) throws SQLException {
        var view = ItemView.of(row, 13);
        return new ItemDetail(row.getObject(9, UUID.class), row.getString(10), row.getString(11), row.getString(12), view, payload);
    }

    /** A run's items counted by status (absent = none). */
    public Map<ItemStatus, Long> countByStatus(UUID runId) {
        Map<ItemStatus, Long> counts = new EnumMap<>(ItemStatus.class);
        db.query("select status, count(*) from execution_items where run_id = ? group by status",
                row -> counts.put(ItemStatus.fromWire(row.getString(1)), row.getLong(2)), runId);
        return counts;
    }

    /**
     * An item as the API shows it. {@code supersededBy}: for a superseded item, the item whose call carried its update;
     * {@code waitingForRecordSince}: since when it waits for an earlier item of its record (dev.runner.ordering);
     * {@code pendingSince}: when it waits for its callback (status pending), else null.
     */
    public record ItemView(UUID itemId, String externalId, ItemStatus status, int attempts, String lastError,
                           JsonNode history, Instant dlqAt, Instant updatedAt, UUID supersededBy, Instant waitingForRecordSince,
                           Instant pendingSince) {

        /** Columns item_id, external_id, status, attempts, last_error, history, dlq_at, updated_at from {@code first}, then
         * superseded_by, record_wait_since and pending_since at {@code recordColumn}. */
        public static ItemView of(ResultSet row, int recordColumn) throws SQLException {
            Timestamp dlqAt = row.getTimestamp(7);
            Timestamp waiting = row.getTimestamp(recordColumn + 1);
            return new ItemView(row.getObject(1, UUID.class), row.getString(2), ItemStatus.fromWire(row.getString(3)),
                    row.getInt(4), row.getString(5), Json.parse(row.getString(6)),
                    dlqAt == null ? null : dlqAt.toInstant(), row.getTimestamp(8).toInstant(), row.getObject(recordColumn, UUID.class),
                    waiting == null ? null : waiting.toInstant(), pendingSince(row, recordColumn + 2));
        }

        /** When a pending item began to wait, from column {@code column} (pending_since; status in column 3); null for any other status. */
        private static Instant pendingSince(ResultSet row, int column) throws SQLException {
            Timestamp since = row.getTimestamp(column);
            return since == null || !ItemStatus.PENDING.wireName().equals(row.getString(3)) ? null : since.toInstant();
        }
    }

    /**
     * A page of a run's items in id (= creation) order, after {@code afterItemId} (keyset paging): of one status, a
     * range of execution_items_by_status; of every status, those ranges merged, at most a page of each.
     */
    public List<ItemView> list(UUID runId, ItemStatus status, UUID afterItemId, int limit) {
        return db.query(listSql(runId, status, afterItemId, limit), row -> ItemView.of(row, 9));
    }

    /** The statement {@link #list} runs. */
    public static Database.Sql listSql(UUID runId, ItemStatus status, UUID afterItemId, int limit) {
        String[] statuses = status == null
                ? Arrays.stream(ItemStatus.values()).map(ItemStatus::wireName).toArray(String[]::new)
                : new String[] {status.wireName()};
        return new Database.Sql("""
                select i.* from unnest(?::text[]) as s(status)
                cross join lateral (
                    select item_id, external_id, status, attempts, last_error, history::text, dlq_at, updated_at, superseded_by,
                        record_wait_since, pending_since
                    from execution_items
                    where run_id = ? and status = s.status and (?::uuid is null or item_id > ?)
                    order by item_id
                    limit ?) i
                order by i.item_id
                limit ?
                """, Database.array("text", statuses), runId, afterItemId, afterItemId, limit, limit);
    }
}
