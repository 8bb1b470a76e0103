package dev.runner.run;

import dev.runner.store.Database;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Reads of the runs table for the management API's lists; the pipeline never uses them. Newest
 * first with keyset paging on (created_at, run_id), which the runs_newest and runs_by_tenant
 * indexes serve in order: a page costs one statement however deep it is.
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
        String trigger = filter.trigger() == null ? null : filter.trigger().wireName();
        String status = filter.status() == null ? null : filter.status().wireName();
        Instant beforeAt = before == null ? null : before.createdAt();
        UUID beforeId = before == null ? null : before.runId();
        return db.query("select " + RunStore.COLUMNS + """
                from runs
                where (?::text is null or tenant_id = ?)
                  and (?::text is null or integration_key = ?)
                  and (?::text is null or handler_key = ?)
                  and (?::text is null or trigger = ?)
                  and (?::text is null or status = ?)
                  and (?::timestamptz is null or (created_at, run_id) < (?, ?))
                order by created_at desc, run_id desc
                limit ?
                """, RunStore::run,
                filter.tenantId(), filter.tenantId(), filter.integrationKey(), filter.integrationKey(),
                filter.handlerKey(), filter.handlerKey(), trigger, trigger, status, status,
                beforeAt, beforeAt, beforeId, limit);
    }
}
