package dev.runner.pipeline;

import dev.runner.callback.CallbackStore;
import dev.runner.callback.PendingWaits;
import dev.runner.config.RunnerConfig;
import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemJob;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.ordering.RecordOrder;
import dev.runner.packing.ItemPacker;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunStore;

import java.util.ArrayList;
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
 * than being lost; their other items, already settled, are then skipped by the claim. Items of a
 * record that waited for an item this batch ended go out with the re-sends ({@link RecordOrder}).
 */
public final class SettleStep {

    private static final Log LOG = Log.of(SettleStep.class);

    private final Settlement settlement;
    private final RecordOrder order;
    private final ItemPacker packer;
    private final RunnerConfig.Queues queueNames;
    private final RunStore runs;
    private final QueueClient queues;
    private final String itemsDlq;
    private final Metrics metrics;
    private final PendingWaits pending;

    /**
     * @param config  its retries, queues and items per message
     * @param order   where a batch's results are written, releasing what waits behind an ordered item that ended
     * @param pending where items answered pending begin to wait
     */
    public SettleStep(RunnerConfig config, RecordOrder order, RunStore runs, QueueClient queues, Metrics metrics, PendingWaits pending) {
        this.packer = new ItemPacker(config.itemsPerMessage());
        this.settlement = new Settlement(config.retry(), config.queues(), packer);
        this.order = order;
        this.queueNames = config.queues();
        this.itemsDlq = config.queues().itemsDlq();
        this.runs = runs;
        this.queues = queues;
        this.metrics = metrics;
        this.pending = pending;
    }

    /**
     * @param ordered the handlers whose items go one at a time per record
     * @return the message ids the event source must not delete
     */
    List<String> settle(List<Fate> fates, Set<String> tenants, Set<HandlerRef> ordered) {
        Settlement.Plan plan = settlement.plan(fates);
        if (!plan.toDlq().isEmpty()) {
            queues.sendAll(itemsDlq, plan.toDlq());
            LOG.warn("sent to DLQ", "items", plan.toDlq().size());
        }
        // Runs whose last items this batch ended are ended by the record itself; the others are checked after it.
        RecordOrder.Recorded recorded = order.record(plan.results(), plan.runsToCheck(), orderedIds(fates, ordered));
        List<UUID> ended = runs.ended(recorded.completed());
        Set<String> failed = new LinkedHashSet<>();
        withReleased(plan.resends(), recorded.released()).forEach((queueUrl, resends) -> {
            try {
                queues.sendAll(queueUrl, resends.stream().map(Settlement.Resend::message).toList());
            } catch (RuntimeException e) {
                LOG.warn("re-send failed; the original messages come back instead", "items",
                        resends.stream().mapToInt(Settlement.Resend::items).sum(), "error", e);
                resends.forEach(resend -> failed.addAll(resend.originalMessageIds()));
            }
        });
        if (!plan.waiting().isEmpty()) {
            failed.addAll(settle(beginWaiting(plan.waiting()), tenants, ordered));
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

    /** The items of ordered handlers among the fates: the record releases what waits behind those that ended. */
    private static List<UUID> orderedIds(List<Fate> fates, Set<HandlerRef> ordered) {
        if (ordered.isEmpty()) {
            return List.of();
        }
        return fates.stream().map(Fate::item)
                .filter(item -> ordered.contains(new HandlerRef(item.job().integrationKey(), item.job().handlerKey())))
                .map(Settlement.Item::itemId).distinct().toList();
    }

    /** The re-sends and, packed beside them, the released items (due now; no message of this batch is theirs). */
    private Map<String, List<Settlement.Resend>> withReleased(Map<String, List<Settlement.Resend>> resends, List<ItemJob> released) {
        if (released.isEmpty()) {
            return resends;
        }
        Map<String, List<Settlement.Resend>> all = new LinkedHashMap<>();
        resends.forEach((queue, list) -> all.put(queue, new ArrayList<>(list)));
        List<ItemPacker.Entry<String>> entries = released.stream().map(job -> new ItemPacker.Entry<String>(job, 0, null)).toList();
        for (ItemPacker.Parcel<String> parcel : packer.pack(entries)) {
            all.computeIfAbsent(queueNames.items(parcel.trigger()), q -> new ArrayList<>())
                    .add(new Settlement.Resend(parcel.message(), parcel.items(), Set.of()));
        }
        return all;
    }

    /** The tally as the metrics name it. */
    static Metrics.ItemBatch batchMetrics(Settlement.Tally tally, Set<String> tenants) {
        Map<String, Integer> deferred = new LinkedHashMap<>();
        tally.deferred().forEach((reason, count) -> deferred.put(reason.wireName(), count));
        return new Metrics.ItemBatch(tally.succeeded(), tally.retried(), tally.parked(), deferred, tenants);
    }
}
