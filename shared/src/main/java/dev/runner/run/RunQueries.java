package dev.runner.run;

import dev.runner.store.Database;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Reads of the runs table for the management API's lists; the pipeline never uses them. Newest
 * first with keyset paging on (created_at, run_id). A list of one status reads the range of
 * runs_by_tenant_status (with a tenant) or runs_by_status; a list of every status merges those
 * ranges, at most a page of each, so a page reads at most a page per status however many runs
 * there are (V22__list_indexes.sql).
 */
public final class RunQueries {

    /** Where a page ends: the next page starts strictly after (older than) it. */
    public record Position(Instant createdAt, UUID runId) {}

    private final Database db;

    public RunQueries(Database db) {
        this.db = db;
    }

    /** Up to {@code limit} runs matching {@code filter}, newest first, older than {@code before} when given. */
    public List<Run> page(RunFilter filter, Position before, int limit) {
        return db.query(pageSql(filter, before, limit), RunStore::run);
    }

    /** The statement {@link #page} runs. */
    public static Database.Sql pageSql(RunFilter filter, Position before, int limit) {
        String trigger = filter.trigger() == null ? null : filter.trigger().wireName();
        Instant beforeAt = before == null ? null : before.createdAt();
        UUID beforeId = before == null ? null : before.runId();
        String[] statuses = filter.status() == null
                ? Arrays.stream(RunStatus.values()).map(RunStatus::wireName).toArray(String[]::new)
                : new String[] {filter.status().wireName()};
        return new Database.Sql("""
                select r.* from unnest(?::text[]) as s(status)
                cross join lateral (
                    select %s
                    from runs
                    where status = s.status
                      and (?::text is null or tenant_id = ?)
                      and (?::text is null or integration_key = ?)
                      and (?::text is null or handler_key = ?)
                      and (?::text is null or trigger = ?)
                      and (?::timestamptz is null or (created_at, run_id) < (?, ?))
                    order by created_at desc, run_id desc
                    limit ?) r
                order by r.created_at desc, r.run_id desc
                limit ?
                """.formatted(RunStore.COLUMNS.strip()),
                Database.array("text", statuses), filter.tenantId(), filter.tenantId(), filter.integrationKey(), filter.integrationKey(),
                filter.handlerKey(), filter.handlerKey(), trigger, trigger, beforeAt, beforeAt, beforeId, limit, limit);
    }
}
