package dev.runner.callback;

import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Items whose handler answered pending begin to wait (docs/item-lifecycle.md, pending): each for its handler's
 * {@code configs.callback_timeout_ms}, keeping a concurrency lease when {@code configs.pending_holds_lease} says so.
 * Callbacks that came before the pending answer was recorded are returned, to settle at once.
 */
public final class PendingWaits {

    /** An item answered pending in attempt {@code attempt}. */
    public record Waiting(ItemJob job, int attempt) {}

    private final CallbackStore store;
    private final HeldLeases leases;
    private final Integrations integrations;
    private final Clock clock;

    public PendingWaits(CallbackStore store, HeldLeases leases, Integrations integrations, Clock clock) {
        this.store = store;
        this.leases = leases;
        this.integrations = integrations;
        this.clock = clock;
    }

    /** Parks them (one statement; a Redis round trip per lease held); returns the callbacks already there. */
    public List<CallbackStore.Early> park(List<Waiting> waiting) {
        List<CallbackStore.Parking> parking = new ArrayList<>(waiting.size());
        for (Waiting item : waiting) {
            ItemJob job = item.job();
            HandlerSpec.Configs configs = integrations.handler(job.integrationKey(), job.handlerKey())
                    .map(HandlerSpec::configs).orElse(HandlerSpec.Configs.DEFAULTS);
            Duration wait = Duration.ofMillis(configs.callbackTimeoutMs());
            String held = configs.pendingHoldsLease()
                    ? leases.hold(job.integrationKey(), job.handlerKey(), job.itemId(), clock.instant().plus(wait)) : null;
            parking.add(new CallbackStore.Parking(job.itemId(), item.attempt(), wait, held));
        }
        List<CallbackStore.Early> early = store.park(parking);
        // Those whose callback came first wait no more: their leases go back at once.
        List<HeldLeases.Held> release = new ArrayList<>();
        for (CallbackStore.Early e : early) {
            parking.stream().filter(p -> p.itemId().equals(e.itemId()) && p.heldLease() != null).findFirst().ifPresent(p ->
                    waiting.stream().filter(w -> w.job().itemId().equals(e.itemId())).findFirst().ifPresent(w ->
                            release.add(new HeldLeases.Held(w.job().integrationKey(), w.job().handlerKey(), p.heldLease()))));
        }
        leases.release(release);
        return early;
    }
}
