package dev.runner.pipeline;

import dev.runner.backlog.BacklogHorizon;
import dev.runner.config.RunnerConfig;
import dev.runner.guard.TenantSlot;
import dev.runner.item.ItemJob;
import dev.runner.outbox.OutboxStore;
import dev.runner.packing.ItemPacker;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * The one way items enter the items tiers (fan-out, webhooks, ingest, redrive, resume, the sweeps):
 * each is sent to the tier of its run's trigger, delayed until its tenant's window has room for it,
 * packed with the items of its run that go out with the same delay ({@link ItemPacker}). So a
 * tenant over its limit costs a fraction of a send per item instead of a receive-and-re-send every
 * few seconds, and its backlog waits invisible rather than in front of other tenants' items; beyond
 * its horizon it waits in Postgres, unsent ({@link BacklogHorizon}), until the scheduler releases it.
 * Producers that commit rows and then send use {@link #commitThenSend}: what they owe is recorded
 * in their transaction, so a send lost after the commit is sent by the sweep however busy its tier.
 */
public final class ItemDispatcher {

    private final RunnerConfig.Queues queues;
    private final QueueClient client;
    private final BacklogHorizon backlog;
    private final ItemPacker packer;
    private final OwedSends<ItemJob> owed;

    public ItemDispatcher(RunnerConfig.Queues queues, QueueClient client, BacklogHorizon backlog, ItemPacker packer, Database db,
                          OutboxStore outbox) {
        this.queues = queues;
        this.client = client;
        this.backlog = backlog;
        this.packer = packer;
        this.owed = new OwedSends<>(db, outbox, OutboxStore.Kind.ITEMS, ItemJob::itemId, this::dispatch);
    }

    /**
     * Runs {@code work} in one transaction with the record that the items {@code jobsOf} names are
     * owed their messages, then sends them and settles the record ({@link OwedSends#commitThenSend}):
     * a send that fails is left to the sweep, only one the function is not granted is thrown.
     */
    public <T> T commitThenSend(Database.TransactionWork<T> work, Function<T, List<ItemJob>> jobsOf) {
        return owed.commitThenSend(work, jobsOf);
    }

    /** Sends items whose messages are owed, then settles {@code owed}; false (logged) when the send failed and they stay owed. */
    boolean sendOwed(List<ItemJob> jobs, List<OutboxStore.Owed> owed) {
        return this.owed.sendOwed(jobs, owed);
    }

    /** The items tiers whose queue shows no visible message now. */
    Set<Trigger> quietTiers() {
        return client.quiet(queues.items());
    }

    /** A run was cancelled: the slots its items were sent to (or reserved for) go back at once ({@link BacklogHorizon#releaseRun}). */
    void cancelled(String tenantId, java.util.UUID runId) {
        backlog.releaseRun(tenantId, runId);
    }

    public void dispatch(List<ItemJob> jobs) {
        dispatch(jobs, Map.of());
    }

    /** Sends {@code jobs}, each delayed at least by its {@code leastDelaySeconds} (a coalescing window, dev.runner.coalescing). */
    public void dispatch(List<ItemJob> jobs, Map<UUID, Integer> leastDelaySeconds) {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, TenantSlot> slots = backlog.reserve(jobs);
        List<ItemPacker.Entry<Void>> entries = new ArrayList<>(jobs.size());
        for (ItemJob job : jobs) {
            TenantSlot slot = slots.getOrDefault(job.itemId().toString(), TenantSlot.NONE);
            if (slot.held()) {
                continue; // held in Postgres until its slots come near
            }
            int seconds = Math.max(slot.delay().isZero() ? 0 : Settlement.delaySeconds(slot.delay()),
                    leastDelaySeconds.getOrDefault(job.itemId(), 0));
            entries.add(new ItemPacker.Entry<>(slot.reserved() ? job.withTenantSlot(slot.atMs()) : job, seconds, null));
        }
        Map<String, List<OutgoingMessage>> byQueue = new LinkedHashMap<>();
        for (ItemPacker.Parcel<Void> parcel : packer.pack(entries)) {
            byQueue.computeIfAbsent(queues.items(parcel.trigger()), q -> new ArrayList<>()).add(parcel.message());
        }
        byQueue.forEach(client::sendAll);
    }
}
