package dev.runner.retention;

import dev.runner.config.RunnerConfig;
import dev.runner.store.Database;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Deletes what is past retention, in batches whose cost does not grow with the tables: finished runs
 * and their items past {@code runs}, dead items and dead letters past {@code dead}. Each batch is one
 * short transaction of its own that takes row locks only (workers, the API and the sweeps go on
 * beside it), found through indexes ordered by expiry (runs_finished, runs_kept_dead,
 * dead_letters_received), so a batch reads what it deletes and little else.
 *
 * <p>A run is finished once finished_at is set (a reopened run has it cleared): an open run is never
 * touched, nor its items. Of a run past retention, its ended items go; a dead one stays until it is
 * past {@code dead} itself, and the run with it (its items reference it). Such a run, once nothing
 * but kept items is left, is marked with the newest of them (kept_dead_at) and leaves the index of
 * runs to trim, so it is not read again until that item is due.
 */
public final class RetentionStore {

    /**
     * Finished runs taken per batch; their items are deleted up to the batch's row limit. As many as a batch's rows:
     * a webhook's run holds one item, and at the event intake's rates runs fill as fast as items do.
     */
    private static final int RUNS_PER_BATCH = 10_000;

    /** What a pass deleted. */
    public record Trimmed(long items, long runs, long deadLetters) {
        Trimmed plus(Trimmed other) {
            return new Trimmed(items + other.items, runs + other.runs, deadLetters + other.deadLetters);
        }

        public long total() {
            return items + runs + deadLetters;
        }
    }

    /**
     * Runs past retention, untrimmed ones first, then trimmed ones whose newest kept item is due: at most
     * {@code RUNS_PER_BATCH} of each, read from their indexes in expiry order. Parameters: runs, dead (seconds), twice.
     */
    private static final String EXPIRED_RUNS = """
            expired as materialized (
                (select run_id from runs
                 where finished_at < now() - make_interval(secs => ?) and kept_dead_at is null
                 order by finished_at limit %1$d)
                union all
                (select run_id from runs
                 where kept_dead_at < now() - make_interval(secs => ?) and finished_at < now() - make_interval(secs => ?)
                 order by kept_dead_at limit %1$d))
            """.formatted(RUNS_PER_BATCH);

    /** An item of an expired run that may go: ended, and if dead, dead longer than the dead retention (seconds). */
    private static final String REMOVABLE = """
            (%1$s.status not in ('queued', 'processing', 'retrying', 'parked', 'pending')
             and (%1$s.status <> 'dead' or %1$s.dlq_at < now() - make_interval(secs => ?)))
            """;

    private final Database db;
    private final Clock clock;

    public RetentionStore(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /**
     * Deletes batches of at most {@code batch} rows until nothing past retention is left or {@code budget} is spent
     * (the next tick goes on). Returns what it deleted.
     */
    public Trimmed trim(RunnerConfig.Retention retention, int batch, Duration budget) {
        Instant stop = clock.instant().plus(budget);
        Trimmed total = new Trimmed(0, 0, 0);
        boolean itemsLeft = true;
        boolean deadLettersLeft = true;
        while ((itemsLeft || deadLettersLeft) && clock.instant().isBefore(stop)) {
            long items = 0;
            Settled runs = new Settled(0, 0);
            if (itemsLeft) {
                items = deleteItems(retention, batch);
                // A short batch emptied the runs it looked at of all that may go: settle them.
                runs = items < batch ? settleRuns(retention) : runs;
                itemsLeft = items > 0 || runs.settled() > 0;
            }
            long deadLetters = deadLettersLeft ? deleteDeadLetters(retention.dead(), batch) : 0;
            deadLettersLeft = deadLetters == batch;
            total = total.plus(new Trimmed(items, runs.deleted(), deadLetters));
        }
        return total;
    }

    /** One batch of items of runs past retention. */
    int deleteItems(RunnerConfig.Retention retention, int batch) {
        double runs = retention.runs().toSeconds();
        double dead = retention.dead().toSeconds();
        return db.update("with " + EXPIRED_RUNS + """
                delete from execution_items e
                where e.ctid = any(array(
                        select i.ctid from expired x join execution_items i on i.run_id = x.run_id
                        where %s limit ?))
                  and %s
                """.formatted(REMOVABLE.formatted("i"), REMOVABLE.formatted("e")), runs, dead, runs, dead, batch, dead);
    }

    /** What settling runs did: runs deleted, and runs looked at (deleted, or marked with their newest kept item). */
    record Settled(int deleted, int settled) {}

    /**
     * Runs past retention with nothing left that may go: deleted when no item is left, otherwise marked with the newest
     * kept item (a dead one's dlq_at; now for an item still open, looked at again a dead retention later).
     */
    Settled settleRuns(RunnerConfig.Retention retention) {
        double runs = retention.runs().toSeconds();
        double dead = retention.dead().toSeconds();
        return db.query("with " + EXPIRED_RUNS + """
                , settled as materialized (
                    select x.run_id,
                           (select max(coalesce(k.dlq_at, now())) from execution_items k where k.run_id = x.run_id) as newest_kept
                    from expired x
                    where not exists (select 1 from execution_items i where i.run_id = x.run_id and %s)),
                deleted as (
                    delete from runs r using settled s
                    where r.run_id = s.run_id and s.newest_kept is null and r.finished_at is not null
                    returning r.run_id),
                marked as (
                    update runs r set kept_dead_at = s.newest_kept
                    from settled s
                    where r.run_id = s.run_id and s.newest_kept is not null and r.finished_at is not null
                    returning r.run_id)
                select (select count(*) from deleted), (select count(*) from deleted) + (select count(*) from marked)
                """.formatted(REMOVABLE.formatted("i")), row -> new Settled(row.getInt(1), row.getInt(2)),
                runs, dead, runs, dead).getFirst();
    }

    /** One batch of dead letters past the dead retention. */
    int deleteDeadLetters(Duration dead, int batch) {
        return db.update("""
                delete from dead_letters
                where id = any(array(
                    select id from dead_letters where received_at < now() - make_interval(secs => ?) order by received_at limit ?))
                """, (double) dead.toSeconds(), batch);
    }
}
