package dev.runner.backlog;

import dev.runner.guard.Candidate;
import dev.runner.guard.Guard;
import dev.runner.guard.TenantSlot;
import dev.runner.item.ItemJob;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The decision at dispatch: each item's tenant-window slot, reserved up to the horizon; an item
 * whose slot would lie further ahead is held in Postgres ({@link BacklogStore#hold}) instead of
 * being sent with a delay SQS cannot honour (15 minutes at most), and its answer is
 * {@link TenantSlot#HELD}: its producer does not send it. Webhook items are never held. Redis away:
 * nothing reserved, nothing held (the fail-open policy).
 */
public final class BacklogHorizon {

    private final Guard guard;
    private final BacklogStore store;
    private final Duration horizon;
    private final dev.runner.metrics.Metrics metrics;

    public BacklogHorizon(Guard guard, BacklogStore store, Duration horizon, dev.runner.metrics.Metrics metrics) {
        this.guard = guard;
        this.store = store;
        this.horizon = horizon;
        this.metrics = metrics;
    }

    /** The slots of items about to be sent, by itemId; held ones are {@link TenantSlot#HELD} and already held in Postgres. */
    public Map<String, TenantSlot> reserve(List<ItemJob> jobs) {
        Map<String, dev.runner.integration.HandlerRef> handlers = new java.util.HashMap<>();
        jobs.forEach(job -> handlers.put(job.itemId().toString(), new dev.runner.integration.HandlerRef(job.integrationKey(), job.handlerKey())));
        Map<String, TenantSlot> slots = guard.reserveTenantSlots(jobs.stream().map(BacklogHorizon::candidate).toList(), horizon, handlers::get);
        List<ItemJob> held = jobs.stream().filter(job -> slots.getOrDefault(job.itemId().toString(), TenantSlot.NONE).held()).toList();
        store.hold(held);
        held.stream().collect(java.util.stream.Collectors.groupingBy(ItemJob::tenantId, java.util.stream.Collectors.counting()))
                .forEach((tenant, count) -> metrics.itemsHeld(tenant, count.intValue()));
        return slots;
    }

    /**
     * Gives back at once the future slots a cancelled run's items hold (their held ones hold none,
     * and the cancel ends their rows): the tenant's next items take them. Returns how many.
     */
    public int releaseRun(String tenantId, java.util.UUID runId) {
        return guard.releaseRun(tenantId, runId);
    }

    /** An item as the tenant window sees it: its tenant, priority and run. */
    static Candidate candidate(ItemJob job) {
        return new Candidate(job.itemId().toString(), job.tenantId(), job.trigger().priority(), 0, Candidate.runTagOf(job.runId()), 1);
    }
}
