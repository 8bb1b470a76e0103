package dev.runner.pipeline;

import dev.runner.callback.CallbackStore;
import dev.runner.callback.PendingWaits;
import dev.runner.config.RunnerConfig;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.packing.ItemPacker;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunStore;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The settling step of {@link ItemWorker}: {@link Settlement} plans what the batch's fates mean,
 * and this carries the plan out, in its order (see {@link Settlement.Plan}). A re-send that fails
 * leaves the messages its items came in undeleted (listed as failed), so they come back rather
 * than being lost; their other items, already settled, are then skipped by the claim.
 */
public final class SettleStep {

    private static final Log LOG = Log.of(SettleStep.class);

    private final Settlement settlement;
    private final ItemStore items;
    private final RunStore runs;
    private final QueueClient queues;
    private final String itemsDlq;
    private final Metrics metrics;
    private final PendingWaits pending;

    /**
     * @param config  its retries, queues and items per message
     * @param pending where items answered pending begin to wait
     */
    public SettleStep(RunnerConfig config, ItemStore items, RunStore runs, QueueClient queues, Metrics metrics, PendingWaits pending) {
        this.settlement = new Settlement(config.retry(), config.queues(), new ItemPacker(config.itemsPerMessage()));
        this.itemsDlq = config.queues().itemsDlq();
        this.items = items;
        this.runs = runs;
        this.queues = queues;
        this.metrics = metrics;
        this.pending = pending;
    }

    /** @return the message ids the event source must not delete */
    List<String> settle(List<Fate> fates, Set<String> tenants) {
        Settlement.Plan plan = settlement.plan(fates);
        if (!plan.toDlq().isEmpty()) {
            queues.sendAll(itemsDlq, plan.toDlq());
            LOG.warn("sent to DLQ", "items", plan.toDlq().size());
        }
        // Runs whose last items this batch ended are ended by the record itself; the others are checked after it.
        List<UUID> ended = runs.ended(items.record(plan.results(), plan.runsToCheck()));
        Set<String> failed = new LinkedHashSet<>();
        plan.resends().forEach((queueUrl, resends) -> {
            try {
                queues.sendAll(queueUrl, resends.stream().map(Settlement.Resend::message).toList());
            } catch (RuntimeException e) {
                LOG.warn("re-send failed; the original messages come back instead", "items",
                        resends.stream().mapToInt(Settlement.Resend::items).sum(), "error", e);
                resends.forEach(resend -> failed.addAll(resend.originalMessageIds()));
            }
        });
        if (!plan.waiting().isEmpty()) {
            failed.addAll(settle(beginWaiting(plan.waiting()), tenants));
        }
        Set<UUID> stillOpen = new LinkedHashSet<>(plan.runsToCheck());
        ended.forEach(stillOpen::remove);
        if (!stillOpen.isEmpty()) {
            runs.completeIfDone(stillOpen);
        }
        Settlement.Tally tally = plan.tally();
        if (tally.deferredTotal() > 0) {
            LOG.info("deferred", "items", tally.deferredTotal(), "why", tally.deferred().keySet().stream().map(Reason::wireName).toList());
        }
        metrics.itemsSettled(batchMetrics(tally, tenants));
        return List.copyOf(failed);
    }

    /**
     * Items answered pending begin to wait (after the results are written, so a callback racing the answer finds its
     * item either still processing or pending, CallbackStore); those whose callback came first are returned as called
     * with its answer, to settle now.
     */
    private List<Fate> beginWaiting(List<Settlement.Waiting> waiting) {
        Map<UUID, Settlement.Item> byId = new LinkedHashMap<>();
        waiting.forEach(w -> byId.put(w.item().itemId(), w.item()));
        List<CallbackStore.Early> early = pending.park(waiting.stream()
                .map(w -> new PendingWaits.Waiting(w.item().job(), w.attempt())).toList());
        if (!early.isEmpty()) {
            LOG.info("callbacks came before their pending answer was recorded", "items", early.size());
        }
        return early.stream().<Fate>map(e -> new Fate.Called(byId.get(e.itemId()), e.attempt(), e.answer())).toList();
    }

    /** The tally as the metrics name it. */
    static Metrics.ItemBatch batchMetrics(Settlement.Tally tally, Set<String> tenants) {
        Map<String, Integer> deferred = new LinkedHashMap<>();
        tally.deferred().forEach((reason, count) -> deferred.put(reason.wireName(), count));
        return new Metrics.ItemBatch(tally.succeeded(), tally.retried(), tally.parked(), deferred, tenants);
    }
}
