package dev.runner.item;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.run.CompletedRun;
import dev.runner.run.RunRef;
import dev.runner.store.Database;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The execution_items table, set-based: every operation takes a whole batch in one statement, so
 * an SQS batch of ten items costs a fixed handful of statements, not ten of each.
 */
public final class ItemStore {

    /** An item as a producer knows it. */
    public record NewItem(String externalId, JsonNode payload) {}

    /** A claimed item: its attempt number (this one included) and payload. */
    public record Claimed(int attempt, JsonNode payload) {}

    /** What to write for an item of a settled batch. */
    public sealed interface Result {
        UUID itemId();

        record Succeeded(UUID itemId) implements Result {}

        /** Back to the queue: its message is visible again after {@code visibleInSeconds}. */
        record Retrying(UUID itemId, String error, int visibleInSeconds) implements Result {}

        /**
         * Sent to the DLQ; the DLQ consumer will mark it dead. Never claimable again until redriven.
         * {@code attemptUnused}: its claim counted an attempt no call used, given back here.
         */
        record HandedToDlq(UUID itemId, String error, boolean attemptUnused) implements Result {}

        /** Not processed after all (the handler asked for later): the attempt is given back; re-sent delayed. */
        record Deferred(UUID itemId, int visibleInSeconds) implements Result {}

        /** Not claimed (admission deferred it): only when its re-sent message is expected back. */
        record Waiting(UUID itemId, int visibleInSeconds) implements Result {}
    }

    private final Database db;
    private final Clock clock;

    public ItemStore(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /**
     * Inserts a page of a run's items, idempotent on redelivery: items already stored and still
     * queued are returned again (their first send may have been lost), items further along are not.
     * Duplicate externalIds inside the page keep the first.
     */
    public List<ItemJob> insert(RunRef run, List<NewItem> items) {
        return insert(run, items, false);
    }

    /** {@code byRecord}: its handler has {@code ordered_by_record}, so the items enter the record index (dev.runner.ordering). */
    public List<ItemJob> insert(RunRef run, List<NewItem> items, boolean byRecord) {
        try (Connection connection = db.dataSource().getConnection()) {
            return insert(connection, run, items, byRecord);
        } catch (SQLException e) {
            throw new Database.StoreException("insert items", e);
        }
    }

    public List<ItemJob> insert(Connection connection, RunRef run, List<NewItem> items) throws SQLException {
        return insert(connection, run, items, false);
    }

    public List<ItemJob> insert(Connection connection, RunRef run, List<NewItem> items, boolean byRecord) throws SQLException {
        Map<String, NewItem> unique = new LinkedHashMap<>();
        items.forEach(item -> unique.putIfAbsent(item.externalId(), item));
        if (unique.isEmpty()) {
            return List.of();
        }
        UUID[] ids = new UUID[unique.size()];
        String[] externalIds = new String[unique.size()];
        String[] payloads = new String[unique.size()];
        int i = 0;
        for (NewItem item : unique.values()) {
            ids[i] = Ids.next(clock);
            externalIds[i] = item.externalId();
            payloads[i] = item.payload() == null ? null : Json.write(item.payload());
            if (payloads[i] != null && payloads[i].contains("\\u0000")) {
                throw new Json.InvalidJsonException("item " + item.externalId() + ": payload contains \\u0000, which Postgres cannot store");
            }
            i++;
        }
        return db.query(connection, """
                insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, payload, by_record)
                select v.item_id, ?, ?, ?, ?, v.external_id, v.payload::jsonb, ?::boolean
                from unnest(?::uuid[], ?::text[], ?::text[]) as v(item_id, external_id, payload)
                on conflict (run_id, external_id) do update set updated_at = execution_items.updated_at
                    where execution_items.status = 'queued'
                returning item_id, external_id
                """, row -> new ItemJob(run.runId(), row.getObject(1, UUID.class), run.tenantId(), run.integrationKey(),
                        run.handlerKey(), run.direction(), run.trigger(), row.getString(2), 0, 0),
                run.runId(), run.tenantId(), run.integrationKey(), run.handlerKey(), byRecord ? Boolean.TRUE : null,
                Database.array("uuid", ids), Database.array("text", externalIds), Database.array("text", payloads));
    }

    /**
     * What a claim found: the items claimed for an attempt, and those whose message arrived before
     * the item was due (a duplicate, or a message that came back before its deferral ended), with
     * how long until they are due; {@code waiting}: those that wait for an earlier item of their record
     * (dev.runner.ordering). Items in none are ended, parked or another worker's.
     */
    public record Claim(Map<UUID, Claimed> claimed, Map<UUID, Duration> early, Set<UUID> waiting) {
        public Claim(Map<UUID, Claimed> claimed, Map<UUID, Duration> early) {
            this(claimed, early, Set.of());
        }
    }

    /**
     * Claims items for an attempt: queued or retrying ones whose message was due (a message that
     * arrives before its backoff or deferral ends does not let its item through), or processing
     * ones whose worker went silent longer than {@code lease}. Succeeded, dead, parked and
     * handed-off items are not claimed, which is what makes a second SQS delivery harmless. Nor are the
     * items of a cancelled run: those still waiting end cancelled here (an item that was in flight when
     * its run was cancelled, or one its fetch stored after), so their message is dropped. One statement
     * ({@code runner_claim_items}, db/migration/V11__hot_statements.sql).
     */
    public Claim claim(Collection<UUID> itemIds, Duration lease) {
        if (itemIds.isEmpty()) {
            return new Claim(Map.of(), Map.of());
        }
        return claim(new Database.Sql("select item_id, attempts, payload, early_ms, false from runner_claim_items(?::uuid[], ?)",
                Database.array("uuid", itemIds.toArray()), lease.toMillis() / 1000.0));
    }

    /** Runs a claim statement whose rows are (item_id, attempts, payload, early_ms, waiting). */
    public Claim claim(Database.Sql statement) {
        Map<UUID, Claimed> claimed = new HashMap<>();
        Map<UUID, Duration> early = new HashMap<>();
        Set<UUID> waiting = new HashSet<>();
        db.query(statement, row -> {
            UUID id = row.getObject(1, UUID.class);
            if (row.getBoolean(5)) {
                waiting.add(id);
            } else if (row.getObject(4) == null) {
                claimed.put(id, new Claimed(row.getInt(2), row.getString(3) == null ? Json.object() : Json.parse(row.getString(3))));
            } else {
                early.put(id, Duration.ofMillis(row.getLong(4)));
            }
            return id;
        });
        return new Claim(claimed, early, waiting);
    }

    /**
     * Writes every result of a batch in one statement ({@code runner_record_results},
     * db/migration/V11__hot_statements.sql). Called items change only while processing (a lost race
     * is a zero-row update); waiting items only while queued or retrying.
     */
    public void record(List<Result> results) {
        record(results, List.of());
    }

    /**
     * Writes every result of a batch and, in the same statement, ends each of {@code runsToCheck} whose items have all
     * ended ({@code runner_record_and_complete}, db/migration/V12__event_intake.sql): a run whose last items this batch
     * ended (a webhook's run of one item) needs no statement of its own. Returns the runs it ended; one of
     * {@code runsToCheck} it did not end may still end by another worker's items, and is checked again once this
     * has committed (RunStore.completeIfDone).
     */
    public List<CompletedRun> record(List<Result> results, Collection<UUID> runsToCheck) {
        if (results.isEmpty()) {
            return List.of();
        }
        ResultColumns columns = ResultColumns.of(results);
        return db.query(new Database.Sql("""
                select run_id, tenant_id, created_at, finished_at
                from runner_record_and_complete(?::uuid[], ?::text[], ?::text[], ?::int[], ?::boolean[], ?::int[], ?::uuid[])
                """, columns.with(Database.array("uuid", runsToCheck.toArray()))), CompletedRun::of);
    }

    /** A batch's results as the record functions take them: one array per column, in their parameter order. */
    public record ResultColumns(Object[] arrays) {

        public static ResultColumns of(List<Result> results) {
            int n = results.size();
            UUID[] ids = new UUID[n];
            String[] statuses = new String[n];
            String[] errors = new String[n];
            Integer[] refunds = new Integer[n];
            Boolean[] handoffs = new Boolean[n];
            Integer[] visibleIn = new Integer[n];
            for (int i = 0; i < n; i++) {
                Result result = results.get(i);
                ids[i] = result.itemId();
                refunds[i] = 0;
                handoffs[i] = false;
                switch (result) {
                    case Result.Succeeded s -> statuses[i] = ItemStatus.SUCCEEDED.wireName();
                    case Result.Retrying r -> {
                        statuses[i] = ItemStatus.RETRYING.wireName();
                        errors[i] = r.error();
                        visibleIn[i] = r.visibleInSeconds();
                    }
                    case Result.HandedToDlq h -> {
                        statuses[i] = ItemStatus.PROCESSING.wireName();
                        errors[i] = h.error();
                        handoffs[i] = true;
                        refunds[i] = h.attemptUnused() ? 1 : 0;
                    }
                    case Result.Deferred d -> {
                        statuses[i] = ItemStatus.QUEUED.wireName();
                        refunds[i] = 1;
                        visibleIn[i] = d.visibleInSeconds();
                    }
                    case Result.Waiting w -> visibleIn[i] = w.visibleInSeconds();
                }
            }
            return new ResultColumns(new Object[] {Database.array("uuid", ids), Database.array("text", statuses),
                    Database.array("text", errors), Database.array("int4", refunds), Database.array("bool", handoffs),
                    Database.array("int4", visibleIn)});
        }

        /** These arrays followed by {@code more} parameters. */
        public Object[] with(Object... more) {
            Object[] all = java.util.Arrays.copyOf(arrays, arrays.length + more.length);
            System.arraycopy(more, 0, all, arrays.length, more.length);
            return all;
        }
    }

    /** A dead item as the DLQ consumer ends it. {@code error} null keeps the last error recorded. */
    public record Dead(UUID itemId, String error) {}

    /**
     * What marking came to.
     *
     * @param runsOfDead  the run of each item marked dead (one entry per item: their count is how many died, their runs
     *                    are the ones to check for completion)
     * @param inFlight    items in a live claim: their attempt is under way and decides; the dead letter is looked at again later
     * @param backToWork  items whose worker stopped mid-call with attempts left: retrying, due now, so the sweep sends them again
     */
    public record Marked(List<UUID> runsOfDead, Set<UUID> inFlight, int backToWork) {}

    /**
     * Marks dead the items whose dead letter is their end (docs/item-lifecycle.md, the dead-letter function): handed to
     * the DLQ by their worker, parked, or out of attempts (its worker stopped mid-call on the last one). Any other item
     * lives on: a dead letter that comes back after a redrive, or that SQS moved for receives that claimed nothing,
     * finds it queued or retrying with attempts left, and its live message (or the sweep) brings it; one whose worker
     * stopped mid-call with attempts left goes back to retrying, due now. One statement.
     */
    public Marked markDead(List<Dead> items, Duration lease, int maxAttempts) {
        if (items.isEmpty()) {
            return new Marked(List.of(), Set.of(), 0);
        }
        UUID[] ids = items.stream().map(Dead::itemId).toArray(UUID[]::new);
        String[] errors = items.stream().map(Dead::error).toArray(String[]::new);
        double leaseSeconds = lease.toMillis() / 1000.0;
        List<UUID> runsOfDead = new ArrayList<>();
        Set<UUID> inFlight = new HashSet<>();
        int[] backToWork = {0};
        db.query("""
                with v as (select * from unnest(?::uuid[], ?::text[]) as v(item_id, error)),
                found as materialized (
                    select e.item_id, case
                        when e.status = 'parked' or (e.status = 'processing' and e.claimed_at = 'infinity') then 'dead'
                        when e.status = 'processing' and e.claimed_at >= now() - make_interval(secs => ?) then 'in_flight'
                        when e.status in ('queued', 'retrying', 'processing') and e.attempts >= ? then 'dead'
                        when e.status = 'processing' then 'back_to_work'
                        end as fate
                    from execution_items e join v on v.item_id = e.item_id
                    for update of e),
                dead as (
                    update execution_items e set status = 'dead', dlq_at = now(), finished_at = now(), updated_at = now(),
                        last_error = coalesce(v.error, e.last_error, 'exceeded the queue''s maxReceiveCount')
                    from found f, v
                    where e.item_id = f.item_id and v.item_id = f.item_id and f.fate = 'dead'
                    returning e.run_id),
                resumed as (
                    update execution_items e set status = 'retrying', claimed_at = null, next_visible_at = now(), updated_at = now()
                    from found f
                    where e.item_id = f.item_id and f.fate = 'back_to_work'
                    returning e.item_id)
                select 'dead', run_id from dead
                union all select 'in_flight', item_id from found where fate = 'in_flight'
                union all select 'back_to_work', item_id from resumed
                """, row -> {
                    UUID id = row.getObject(2, UUID.class);
                    switch (row.getString(1)) {
                        case "dead" -> runsOfDead.add(id);
                        case "in_flight" -> inFlight.add(id);
                        default -> backToWork[0]++;
                    }
                    return id;
                }, Database.array("uuid", ids), Database.array("text", errors), leaseSeconds, maxAttempts);
        return new Marked(runsOfDead, inFlight, backToWork[0]);
    }

    /**
     * Items waiting for a message that is overdue by {@code grace}: queued (not held back by the
     * backlog horizon, which sends no message) or retrying, expected back (or last touched) before
     * now − grace. Their message may have been lost between a commit and a send that failed. Each is marked due now, so it is re-sent at most once per period (it is
     * overdue again only a grace later); a duplicate of a live message is harmless (the claim lets one through).
     * {@code tiers} limits the sweep to runs of those triggers (a tier with a visible backlog is
     * left alone: its messages may only be waiting their turn).
     */
    public List<ItemJob> overdue(Duration grace, Collection<Trigger> tiers, int limit) {
        if (tiers.isEmpty()) {
            return List.of();
        }
        return db.query("""
                with picked as materialized (
                    select i.item_id from execution_items i join runs ir on ir.run_id = i.run_id
                    where i.status in ('queued', 'retrying') and i.held_since is null
                      and coalesce(i.next_visible_at, i.updated_at) < now() - make_interval(secs => ?)
                      and ir.trigger = any(?)
                    order by coalesce(i.next_visible_at, i.updated_at) limit ? for update of i skip locked)
                update execution_items e set next_visible_at = now(), updated_at = now()
                from picked p, runs r
                where e.item_id = p.item_id and r.run_id = e.run_id
                returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id, e.attempts
                """, ItemStore::job, (double) grace.toSeconds(),
                Database.array("text", tiers.stream().map(Trigger::wireName).toArray()), limit);
    }

    /** The items of {@code itemIds} still queued: those an owed message (OutboxStore) must still bring. */
    public List<ItemJob> queued(Collection<UUID> itemIds) {
        if (itemIds.isEmpty()) {
            return List.of();
        }
        return db.query("""
                select e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id, e.attempts
                from execution_items e join runs r on r.run_id = e.run_id
                where e.item_id = any(?) and e.status = 'queued'
                """, ItemStore::job, Database.array("uuid", itemIds.toArray()));
    }

    /** An item job from the columns run_id, item_id, tenant_id, integration_key, handler_key, direction, trigger, external_id, attempts. */
    public static ItemJob job(ResultSet row) throws SQLException {
        return new ItemJob(row.getObject(1, UUID.class), row.getObject(2, UUID.class), row.getString(3), row.getString(4),
                row.getString(5), Direction.fromWire(row.getString(6)), Trigger.fromWire(row.getString(7)), row.getString(8),
                row.getInt(9), 0);
    }
}
