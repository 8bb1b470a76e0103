package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.guard.Candidate;
import dev.runner.guard.Guard;
import dev.runner.guard.TenantSlot;
import dev.runner.item.ItemJob;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.outbox.OutboxStore;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.store.Database;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The one way items enter the items tiers (fan-out, webhooks, ingest, redrive, resume): each is
 * sent to the tier of its run's trigger, delayed until its tenant's window has room for it. So a
 * tenant over its limit costs one send per item instead of a receive-and-re-send every few
 * seconds, and its backlog waits invisible rather than in front of other tenants' items.
 * Producers that commit rows and then send use {@link #commitThenSend}: what they owe is recorded
 * in their transaction, so a send lost after the commit is sent by the sweep however busy its tier.
 */
public final class ItemDispatcher {

    private static final Log LOG = Log.of(ItemDispatcher.class);

    private final RunnerConfig.Queues queues;
    private final QueueClient client;
    private final Guard guard;
    private final Database db;
    private final OutboxStore outbox;

    public ItemDispatcher(RunnerConfig.Queues queues, QueueClient client, Guard guard, Database db, OutboxStore outbox) {
        this.queues = queues;
        this.client = client;
        this.guard = guard;
        this.db = db;
        this.outbox = outbox;
    }

    /**
     * Runs {@code work} in one transaction with the record that the items {@code jobsOf} names are
     * owed their messages, then sends them and settles the record. A send that fails is logged, not
     * thrown: the rows and the record are committed, the sweep sends them (RUNNER_SWEEP_UNSENT_S),
     * so the caller answers as accepted, never with a failure its client would retry. Only a send
     * the function is not granted ({@link QueueClient.NotGranted}) is thrown, after the commit.
     */
    public <T> T commitThenSend(Database.TransactionWork<T> work, Function<T, List<ItemJob>> jobsOf) {
        record Committed<T>(T result, List<ItemJob> jobs, OutboxStore.Owed owed) {}
        Committed<T> committed = db.inTransaction(connection -> {
            T result = work.run(connection);
            List<ItemJob> jobs = jobsOf.apply(result);
            return new Committed<>(result, jobs, outbox.owe(connection, OutboxStore.Kind.ITEMS, jobs.stream().map(ItemJob::itemId).toList()));
        });
        sendOwed(committed.jobs(), List.of(committed.owed()));
        return committed.result();
    }

    /**
     * Sends items whose messages are owed, then settles {@code owed}; false (logged) when the send failed and they stay
     * owed. A send this function is not granted is thrown: a deployment bug must show, not wait on the sweep.
     */
    boolean sendOwed(List<ItemJob> jobs, List<OutboxStore.Owed> owed) {
        try {
            dispatch(jobs);
        } catch (QueueClient.NotGranted e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("send after commit failed; the sweep sends these items", "items", jobs.size(), "error", e);
            return false;
        }
        settle(outbox, owed);
        return true;
    }

    /** A settle that fails leaves the record: the sweep then sends a copy of a live message, which the claim lets through once. */
    static void settle(OutboxStore outbox, List<OutboxStore.Owed> owed) {
        try {
            outbox.settle(owed);
        } catch (RuntimeException e) {
            LOG.warn("sent, but not settled; the sweep will send a copy", "error", e);
        }
    }

    public void dispatch(List<ItemJob> jobs) {
        if (jobs.isEmpty()) {
            return;
        }
        Map<String, TenantSlot> slots = guard.reserveTenantSlots(jobs.stream()
                .map(job -> new Candidate(job.itemId().toString(), job.tenantId(), job.trigger().priority())).toList());
        Map<String, List<OutgoingMessage>> byQueue = new LinkedHashMap<>();
        for (ItemJob job : jobs) {
            TenantSlot slot = slots.getOrDefault(job.itemId().toString(), TenantSlot.NONE);
            int seconds = slot.delay().isZero() ? 0 : Settlement.delaySeconds(slot.delay());
            ItemJob sent = slot.reserved() ? job.withTenantSlot(slot.atMs()) : job;
            byQueue.computeIfAbsent(queues.items(job.trigger()), q -> new ArrayList<>())
                    .add(new OutgoingMessage(Json.write(sent.toJson()), seconds, job.tenantId()));
        }
        byQueue.forEach(client::sendAll);
    }
}
