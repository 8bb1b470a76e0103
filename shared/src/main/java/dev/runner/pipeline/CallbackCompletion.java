package dev.runner.pipeline;

import dev.runner.callback.CallbackStore;
import dev.runner.callback.CallbackUrls;
import dev.runner.callback.HeldLeases;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;
import dev.runner.log.Log;
import dev.runner.ordering.RecordOrder;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.queue.QueueMessage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The late answers of items that waited for their callback (docs/handler-contract.md, callbacks): a callback, or the
 * wait's end, is settled by {@link SettleStep} as the handler's synchronous answer would have been (retries with
 * their backoff, the DLQ, run completion, metrics), in the attempt the pending answer was given in. An item of a
 * handler with {@code ordered_by_record} that ends so releases the next item of its record ({@link RecordOrder}).
 */
public final class CallbackCompletion {

    private static final Log LOG = Log.of(CallbackCompletion.class);
    /** Pending items a tick times out at most; the rest wait for the next tick. */
    static final int TIMEOUTS_PER_TICK = 500;

    /** What a callback came to. */
    public sealed interface Completion {
        /** The attempt was pending and in time: settled now with {@code answer}. */
        record Applied(UUID itemId, int attempt, Outcome answer, Duration waited) implements Completion {}

        /** The attempt's call is still in flight (the callback came before the handler's own 202): kept, settled when the 202 is recorded. */
        record Early(UUID itemId, int attempt, Outcome answer) implements Completion {}

        /** The attempt already had its callback: nothing changed; {@code first} is that one's answer. */
        record Repeated(UUID itemId, int attempt, Outcome first) implements Completion {}

        /** Past the attempt's wait (callback_timeout_ms): the attempt failed, or is about to fail, as a timeout. */
        record Expired(UUID itemId, int attempt) implements Completion {}

        /** The item is in another attempt, or ended otherwise ({@code status}: cancelled, succeeded, …): nothing changed. */
        record Ended(UUID itemId, int attempt, String status) implements Completion {}

        /** No such item (any more): nothing changed. */
        record Unknown(UUID itemId) implements Completion {}
    }

    private final CallbackStore store;
    private final HeldLeases leases;
    private final SettleStep settling;
    private final Integrations integrations;

    /** @param integrations which handlers go one item at a time per record */
    public CallbackCompletion(CallbackStore store, HeldLeases leases, SettleStep settling, Integrations integrations) {
        this.store = store;
        this.leases = leases;
        this.settling = settling;
        this.integrations = integrations;
    }

    /** A callback for the item and attempt {@code signed} names (its URL's signature checked), answering {@code answer}. */
    public Completion complete(CallbackUrls.Verdict.Signed signed, Outcome answer) {
        UUID itemId = signed.itemId();
        int attempt = signed.attempt();
        CallbackStore.Taken taken = store.take(itemId, attempt, answer);
        return switch (taken.verdict()) {
            case APPLIED -> {
                settle(List.of(new Fate.Called(item(taken.job()), attempt, taken.answer())), taken.job(), taken.heldLease());
                LOG.info("callback applied", "itemId", itemId, "attempt", attempt, "ok", taken.answer() instanceof Outcome.Succeeded,
                        "waitedMs", taken.waited().toMillis());
                yield new Completion.Applied(itemId, attempt, taken.answer(), taken.waited());
            }
            case EARLY -> {
                LOG.info("callback before its pending answer: kept", "itemId", itemId, "attempt", attempt);
                yield new Completion.Early(itemId, attempt, taken.answer());
            }
            case REPEATED -> new Completion.Repeated(itemId, attempt, taken.answer());
            case EXPIRED -> new Completion.Expired(itemId, attempt);
            case ENDED -> new Completion.Ended(itemId, attempt, taken.status());
            case UNKNOWN -> new Completion.Unknown(itemId);
        };
    }

    /**
     * The scheduler's tick: pending items past their wait fail their attempt as a timeout (retryable: retried with its
     * backoff while attempts are left, then the DLQ), and the leases the others hold are held again. Returns how many
     * timed out.
     */
    public int timeOut() {
        List<CallbackStore.Expired> expired = store.expire(TIMEOUTS_PER_TICK);
        leases.hold(store.heldLeases(TIMEOUTS_PER_TICK));
        if (expired.isEmpty()) {
            return 0;
        }
        List<Fate> fates = new ArrayList<>(expired.size());
        Set<String> tenants = new LinkedHashSet<>();
        List<HeldLeases.Held> held = new ArrayList<>();
        for (CallbackStore.Expired e : expired) {
            fates.add(new Fate.Called(item(e.job()), e.attempt(), new Outcome.Failed("no callback within "
                    + e.waited().toMillis() + " ms of the pending answer (configs.callback_timeout_ms)", true)));
            tenants.add(e.job().tenantId());
            if (e.heldLease() != null) {
                held.add(new HeldLeases.Held(e.job().integrationKey(), e.job().handlerKey(), e.heldLease()));
            }
        }
        leases.release(held);
        settling.settle(fates, tenants, ordered(fates));
        LOG.info("pending items timed out", "items", expired.size());
        return expired.size();
    }

    private void settle(List<Fate> fates, ItemJob job, String heldLease) {
        if (heldLease != null) {
            leases.release(List.of(new HeldLeases.Held(job.integrationKey(), job.handlerKey(), heldLease)));
        }
        // A re-send that fails leaves the item retrying with no message: the overdue sweep sends it (LostWorkSweep).
        settling.settle(fates, Set.of(job.tenantId()), ordered(fates));
    }

    /** The handlers of {@code fates} whose items go one at a time per record: their record releases its next item. */
    private Set<HandlerRef> ordered(List<Fate> fates) {
        Set<HandlerRef> ordered = new LinkedHashSet<>();
        for (Fate fate : fates) {
            ItemJob job = fate.item().job();
            HandlerRef handler = new HandlerRef(job.integrationKey(), job.handlerKey());
            if (!ordered.contains(handler) && RecordOrder.ordered(integrations.handler(job.integrationKey(), job.handlerKey()).orElse(null))) {
                ordered.add(handler);
            }
        }
        return ordered;
    }

    /** A late answer comes in no message: the item stands alone. */
    private static Item item(ItemJob job) {
        return new Item(new QueueMessage("callback-" + job.itemId(), "", "", 1, "callback", Map.of()), job);
    }
}
