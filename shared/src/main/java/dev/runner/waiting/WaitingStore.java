package dev.runner.waiting;

import dev.runner.integration.HandlerRef;
import dev.runner.store.Database;

import java.util.LinkedHashMap;
import java.util.Map;

/** A tenant's open items by handler and state, from its open runs (index runs_by_tenant, then each run's items). One statement. */
public final class WaitingStore {

    /**
     * A handler's open items of one tenant.
     *
     * @param waiting      queued and sent: waiting for their slot, a worker, or a deferral to pass
     * @param held         queued and held in Postgres beyond the tenant's backlog horizon (no message yet)
     * @param parked       parked: the handler is paused or the tenant integration disabled
     * @param retrying     waiting out a retry's backoff
     * @param processing   claimed by a worker, its call in flight
     * @param pending      answered pending: waiting for the partner's callback (dev.runner.callback)
     * @param behindRecord of {@code waiting}, those waiting for an earlier item of their record to end (dev.runner.ordering)
     */
    public record Items(long waiting, long held, long parked, long retrying, long processing, long pending, long behindRecord) {}

    private final Database db;

    public WaitingStore(Database db) {
        this.db = db;
    }

    public Map<HandlerRef, Items> openItems(String tenantId) {
        Map<HandlerRef, Items> items = new LinkedHashMap<>();
        db.query("""
                select e.integration_key, e.handler_key,
                       count(*) filter (where e.status = 'queued' and e.held_since is null),
                       count(*) filter (where e.status = 'queued' and e.held_since is not null),
                       count(*) filter (where e.status = 'parked'),
                       count(*) filter (where e.status = 'retrying'),
                       count(*) filter (where e.status = 'processing'),
                       count(*) filter (where e.status = 'pending'),
                       count(*) filter (where e.status = 'queued' and e.held_since is null and e.record_wait_since is not null)
                from runs r join execution_items e on e.run_id = r.run_id
                where r.tenant_id = ? and r.status in ('queued', 'fetching', 'running')
                  and e.status in ('queued', 'parked', 'retrying', 'processing', 'pending')
                group by e.integration_key, e.handler_key
                order by e.integration_key, e.handler_key
                """, row -> items.put(new HandlerRef(row.getString(1), row.getString(2)),
                new Items(row.getLong(3), row.getLong(4), row.getLong(5), row.getLong(6), row.getLong(7), row.getLong(8), row.getLong(9))),
                tenantId);
        return items;
    }
}
