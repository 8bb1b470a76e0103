package dev.runner.backlog;

import dev.runner.config.RunnerConfig;
import dev.runner.guard.Guard;
import dev.runner.item.ItemJob;
import dev.runner.log.Log;

import java.time.Clock;
import java.util.List;
import java.util.function.Consumer;

/**
 * The scheduler's release of held items, every tick: for each tenant holding items, as many as its
 * window has room for up to the horizon (its limit's pace over the time from its latest reserved
 * slot to now + horizon), most urgent run first, then in the order held; they are dispatched as
 * any item is, so each is sent once with the delay until its slot. A tenant's backlog of any size
 * thus costs one send, one receive and one delete per item. Redis away: nothing is released this
 * tick (the window cannot tell what fits).
 */
public final class BacklogRelease {

    private static final Log LOG = Log.of(BacklogRelease.class);
    /** Tenants served per tick; the next tick goes on after the last one served. */
    static final int MAX_TENANTS = 500;
    /** Items released per tenant per tick at most: one statement's worth. */
    static final int MAX_PER_TENANT = 20_000;

    private final BacklogStore store;
    private final Guard guard;
    private final RunnerConfig.TenantLimit limit;
    private final Consumer<List<ItemJob>> dispatch;
    private final Clock clock;
    /** Where the last tick stopped, so every holding tenant gets its turn however many there are. */
    private String after = "";

    public BacklogRelease(BacklogStore store, Guard guard, RunnerConfig.TenantLimit limit, Consumer<List<ItemJob>> dispatch, Clock clock) {
        this.store = store;
        this.guard = guard;
        this.limit = limit;
        this.dispatch = dispatch;
        this.clock = clock;
    }

    /** One tick's release; returns how many items were released. */
    public synchronized int release() {
        List<String> tenants = store.tenantsHolding(after, MAX_TENANTS);
        if (tenants.isEmpty() && !after.isEmpty()) {
            after = "";
            tenants = store.tenantsHolding(after, MAX_TENANTS);
        }
        if (tenants.isEmpty()) {
            return 0;
        }
        after = tenants.size() < MAX_TENANTS ? "" : tenants.getLast();
        var reach = guard.tenantReach(tenants);
        if (reach.isEmpty()) {
            return 0;
        }
        long now = clock.millis();
        int released = 0;
        for (String tenant : tenants) {
            long room = roomAhead(limit, now, reach.get().getOrDefault(tenant, now));
            List<ItemJob> jobs = store.release(tenant, (int) Math.min(room, MAX_PER_TENANT));
            if (!jobs.isEmpty()) {
                dispatch.accept(jobs);
                released += jobs.size();
            }
        }
        if (released > 0) {
            LOG.info("backlog released", "items", released, "tenants", tenants.size());
        }
        return released;
    }

    /** Slots a tenant may still reserve before now + horizon, at its limit's pace after its latest one ({@code reachMs}). */
    static long roomAhead(RunnerConfig.TenantLimit limit, long nowMs, long reachMs) {
        long free = nowMs + limit.backlogHorizon().toMillis() - Math.max(nowMs, reachMs);
        return Math.max(0, free * limit.perMinute() / Guard.TENANT_WINDOW.toMillis());
    }
}
