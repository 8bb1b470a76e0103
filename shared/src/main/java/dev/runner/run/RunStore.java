package dev.runner.run;

import dev.runner.integration.Direction;
import dev.runner.metrics.Metrics;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The runs table. Status moves are conditional updates: a lost race changes no row. */
public final class RunStore {

    static final String COLUMNS = """
            run_id, tenant_id, integration_key, handler_key, direction, trigger, status, error, created_at, finished_at
            """;

    private final Database db;
    private final Metrics metrics;

    public RunStore(Database db) {
        this(db, Metrics.NONE);
    }

    /** {@code metrics} hears every run this store completes, with its duration (RunDuration). */
    public RunStore(Database db, Metrics metrics) {
        this.db = db;
        this.metrics = metrics;
    }

    private List<UUID> reported(List<CompletedRun> completed) {
        completed.forEach(run -> metrics.runCompleted(run.runId(), run.tenantId(), run.duration()));
        return completed.stream().map(CompletedRun::runId).toList();
    }

    /**
     * Runs another statement ended (the item batch's record, ItemStore.record): told to the metrics as this store's
     * own completions are. Returns their ids.
     */
    public List<UUID> ended(List<CompletedRun> completed) {
        return reported(completed);
    }

    /** Inserts a run; false when its schedule fire key already made one (an overlapping tick). Null key: always inserted. */
    public boolean insert(Connection connection, RunJob job, RunStatus status, String scheduleFireKey) throws SQLException {
        return db.update(connection, """
                insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, schedule_fire_key)
                values (?, ?, ?, ?, ?, ?, ?, ?, ?)
                on conflict (schedule_fire_key) do nothing
                """, job.runId(), job.tenantId(), job.integrationKey(), job.handlerKey(), job.direction().wireName(),
                job.trigger().wireName(), job.trigger().priority(), status.wireName(), scheduleFireKey) == 1;
    }

    public Optional<Run> find(UUID runId) {
        return db.queryOne("select " + COLUMNS + " from runs where run_id = ?", RunStore::run, runId);
    }

    /** Where a fetch resumes: the saved cursor; empty when the run is past fetching (a stale RunJob). */
    public record FetchState(String cursor, int pagesFetched) {}

    /**
     * Takes the run's fetch for {@code owner} (the RunJob message) until {@code leaseFor} has passed:
     * a queued run, or a fetching one whose lease ran out or that this owner already holds (its own
     * redelivery). Empty when the run is past fetching or another owner fetches it now, so a
     * duplicate RunJob never fetches a run twice at once.
     */
    public Optional<FetchState> startFetching(UUID runId, String owner, Duration leaseFor) {
        return db.queryOne("""
                update runs set status = 'fetching', fetch_owner = ?, fetch_lease_until = now() + make_interval(secs => ?),
                    updated_at = now()
                where run_id = ? and (status = 'queued'
                      or (status = 'fetching' and (fetch_lease_until is null or fetch_lease_until < now() or fetch_owner = ?)))
                returning fetch_cursor, pages_fetched
                """, row -> new FetchState(row.getString(1), row.getInt(2)), owner, leaseFor.toMillis() / 1000.0, runId, owner);
    }

    /** Gives the fetch up for a continuation message, which takes it at once. */
    public void releaseFetch(UUID runId, String owner) {
        db.update("update runs set fetch_lease_until = null where run_id = ? and fetch_owner = ?", runId, owner);
    }

    /** Saves where the fetch goes on; false when the run is no longer fetching (cancelled): the fetch stops here. */
    public boolean saveCursor(UUID runId, String nextCursor) {
        return db.update("""
                update runs set fetch_cursor = ?, pages_fetched = pages_fetched + 1, updated_at = now()
                where run_id = ? and status = 'fetching'
                """, nextCursor, runId) == 1;
    }

    /** fetching → running: every item is known. */
    public void finishFetching(UUID runId) {
        db.update("update runs set status = 'running', updated_at = now() where run_id = ? and status = 'fetching'", runId);
    }

    public void fail(UUID runId, String error) {
        db.update("""
                update runs set status = 'failed', error = ?, finished_at = now(), updated_at = now()
                where run_id = ? and status in ('queued', 'fetching')
                """, error, runId);
    }

    /**
     * Sets the final status of every given run whose items have all ended, once: cancelled when its
     * fetch was cut short by a cancel or any item was cancelled (a cancelled run whose dead items were
     * redriven ends cancelled again: not all its work was done), completed_with_errors when any is
     * dead, else completed ({@code runner_complete_runs}, db/migration/V20__run_final_status.sql). Run after the
     * statement that ended items has committed: of two workers ending a run's last items at once,
     * the later commit's check sees both, so the run never stays open; the status condition makes
     * the earlier one's a no-op. One statement for all runs of a batch.
     */
    public List<UUID> completeIfDone(Collection<UUID> runIds) {
        if (runIds.isEmpty()) {
            return List.of();
        }
        return reported(db.query("select run_id, tenant_id, created_at, finished_at from runner_complete_runs(?::uuid[])",
                CompletedRun::of, Database.array("uuid", runIds.toArray())));
    }

    /** The runs of {@code runIds} still queued: those whose owed RunJob (OutboxStore) must still start them. */
    public List<RunJob> queued(Collection<UUID> runIds) {
        if (runIds.isEmpty()) {
            return List.of();
        }
        return db.query("select " + COLUMNS + " from runs where run_id = any(?) and status = 'queued'",
                row -> run(row).job(), Database.array("uuid", runIds.toArray()));
    }

    /**
     * Runs still queued, untouched for {@code olderThan}, on the given tiers: their RunJob may have
     * been lost. Touched here, so each is re-sent at most once per period; a duplicate is harmless
     * (the fetch has one owner).
     */
    public List<RunJob> overdueQueued(Duration olderThan, Collection<Trigger> tiers, int limit) {
        if (tiers.isEmpty()) {
            return List.of();
        }
        return db.query("""
                with picked as materialized (
                    select run_id from runs
                    where status = 'queued' and updated_at < now() - make_interval(secs => ?) and trigger = any(?)
                    order by updated_at limit ? for update skip locked)
                update runs r set updated_at = now()
                from picked p
                where r.run_id = p.run_id
                returning r.run_id, r.tenant_id, r.integration_key, r.handler_key, r.direction, r.trigger
                """, row -> new RunJob(row.getObject(1, UUID.class), row.getString(2), row.getString(3), row.getString(4),
                Direction.fromWire(row.getString(5)), Trigger.fromWire(row.getString(6)), null),
                (double) olderThan.toSeconds(), Database.array("text", tiers.stream().map(Trigger::wireName).toArray()), limit);
    }

    /**
     * Completes runs left running although every item ended more than {@code quiet} ago: the
     * completion after the last item was lost (a crash, a timeout, a failed send before it). The
     * sweep that makes completion happen at least once. Returns the runs completed.
     */
    public List<UUID> completeAbandoned(Duration quiet, int limit) {
        return reported(db.query("""
                with picked as materialized (
                    select c.run_id from runs c
                    where c.status = 'running' and c.updated_at < now() - make_interval(secs => ?)
                      and not exists (select 1 from execution_items o
                                      where o.run_id = c.run_id and o.status in ('queued', 'processing', 'retrying', 'parked', 'pending'))
                    order by c.updated_at limit ? for update skip locked)
                select run_id, tenant_id, created_at, finished_at
                from runner_complete_runs((select coalesce(array_agg(run_id), '{}') from picked))
                """, CompletedRun::of, (double) quiet.toSeconds(), limit));
    }

    /**
     * Cancels an open run (queued, fetching or running), in the caller's transaction: at once, no later message for
     * any of its items is called (the claim ends it cancelled, ItemStore), and a fetch in progress stops at its next
     * page; its items not yet called are ended a page at a time by the cancel's bulk action. A cancel that comes
     * before the fetch ended marks the fetch cut short (the run then ends cancelled, V20). False when the run was not
     * open (already ended or cancelled): nothing changed.
     */
    public boolean cancel(Connection connection, UUID runId) throws SQLException {
        return db.update(connection, """
                update runs set status = 'cancelled', finished_at = now(), updated_at = now(), fetch_lease_until = null,
                    fetch_cut = status in ('queued', 'fetching')
                where run_id = ? and status in ('queued', 'fetching', 'running')
                """, runId) == 1;
    }

    /**
     * Every run of {@code runIds} whose dead items went back to work is open again, in the transaction that put them
     * back. One statement. A run still running is locked too: a completion running at the same moment
     * (runner_complete_runs, V68) waits for this commit and then sees the items open, or ended the run first and this
     * reopens it; the lock is taken after the items changed and in run_id order, as the completion takes it.
     */
    public void reopen(Connection connection, Collection<UUID> runIds) throws SQLException {
        if (runIds.isEmpty()) {
            return;
        }
        db.update(connection, """
                with locked as materialized (
                    select run_id from runs
                    where run_id = any(?) and status in ('running', 'completed', 'completed_with_errors', 'cancelled')
                    order by run_id for update)
                update runs r set status = 'running', finished_at = null, kept_dead_at = null, updated_at = now()
                from locked l
                where r.run_id = l.run_id
                """, Database.array("uuid", runIds.toArray()));
    }

    static Run run(ResultSet row) throws SQLException {
        Timestamp finished = row.getTimestamp(10);
        return new Run(row.getObject(1, UUID.class), row.getString(2), row.getString(3), row.getString(4),
                Direction.fromWire(row.getString(5)), Trigger.fromWire(row.getString(6)), RunStatus.fromWire(row.getString(7)),
                row.getString(8), row.getTimestamp(9).toInstant(), finished == null ? null : finished.toInstant());
    }
}
