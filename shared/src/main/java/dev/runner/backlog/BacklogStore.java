package dev.runner.backlog;

import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.store.Database;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Held items in Postgres (execution_items.held_since, index execution_items_held): an item held
 * stays queued, with no message, until released. One statement per operation.
 */
public final class BacklogStore {

    private final Database db;

    public BacklogStore(Database db) {
        this.db = db;
    }

    /** Marks the items held (still queued ones only), each with its run's priority, which orders the release. */
    public void hold(Collection<ItemJob> jobs) {
        if (jobs.isEmpty()) {
            return;
        }
        UUID[] ids = jobs.stream().map(ItemJob::itemId).toArray(UUID[]::new);
        Integer[] priorities = jobs.stream().map(job -> job.trigger().priority()).toArray(Integer[]::new);
        db.update("""
                update execution_items e set held_since = now(), held_priority = v.priority, updated_at = now()
                from unnest(?::uuid[], ?::int[]) as v(item_id, priority)
                where e.item_id = v.item_id and e.status = 'queued'
                """, Database.array("uuid", ids), Database.array("int4", priorities));
    }

    /**
     * Tenants holding items, at most {@code limit}, each after {@code after} in order (a loose scan of
     * execution_items_held: one index probe per tenant, however many items each holds).
     */
    public List<String> tenantsHolding(String after, int limit) {
        return db.query("""
                with recursive tenants(tenant_id) as (
                    (select tenant_id from execution_items
                     where held_since is not null and status = 'queued' and tenant_id > ? order by tenant_id limit 1)
                    union all
                    select (select e.tenant_id from execution_items e
                            where e.held_since is not null and e.status = 'queued' and e.tenant_id > t.tenant_id
                            order by e.tenant_id limit 1)
                    from tenants t where t.tenant_id is not null)
                select tenant_id from tenants where tenant_id is not null limit ?
                """, row -> row.getString(1), after, limit);
    }

    /** How many items each tenant holds (for "why is it waiting"), of the given tenants. */
    public Map<String, Long> heldCounts(Collection<String> tenants) {
        if (tenants.isEmpty()) {
            return Map.of();
        }
        return db.query("""
                select tenant_id, count(*) from execution_items
                where held_since is not null and status = 'queued' and tenant_id = any(?) group by tenant_id
                """, row -> Map.entry(row.getString(1), row.getLong(2)), Database.array("text", tenants.toArray()))
                .stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /**
     * Takes up to {@code count} of a tenant's held items, most urgent run first, then in the order
     * they were held, and releases them (no longer held): the caller dispatches them. Rows another
     * release holds are skipped.
     */
    public List<ItemJob> release(String tenantId, int count) {
        if (count <= 0) {
            return List.of();
        }
        return db.query("""
                with picked as materialized (
                    select item_id from execution_items
                    where tenant_id = ? and held_since is not null and status = 'queued'
                      and not exists (select 1 from runs c where c.run_id = execution_items.run_id and c.status = 'cancelled')
                    order by held_priority, held_since, item_id limit ? for update skip locked)
                update execution_items e set held_since = null, held_priority = null, updated_at = now()
                from picked p, runs r
                where e.item_id = p.item_id and r.run_id = e.run_id
                returning e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id, e.attempts
                """, ItemStore::job, tenantId, count);
    }
}
