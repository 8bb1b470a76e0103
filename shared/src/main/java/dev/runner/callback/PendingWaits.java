package dev.runner.callback;

import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

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

    /** Parks them (one statement; one Redis round trip for the leases held); returns the callbacks already there. */
    public List<CallbackStore.Early> park(List<Waiting> waiting) {
        List<CallbackStore.Parking> parking = new ArrayList<>(waiting.size());
        Map<UUID, HeldLeases.Held> held = new HashMap<>();
        Instant now = clock.instant();
        for (Waiting item : waiting) {
            ItemJob job = item.job();
            HandlerSpec.Configs configs = integrations.handler(job.integrationKey(), job.handlerKey())
                    .map(HandlerSpec::configs).orElse(HandlerSpec.Configs.DEFAULTS);
            Duration wait = Duration.ofMillis(configs.callbackTimeoutMs());
            if (configs.pendingHoldsLease()) {
                held.put(job.itemId(), HeldLeases.of(job.integrationKey(), job.handlerKey(), job.itemId(), now.plus(wait)));
            }
            parking.add(new CallbackStore.Parking(job.itemId(), item.attempt(), wait, null));
        }
        if (!leases.hold(List.copyOf(held.values()))) {
            held.clear(); // Redis did not take them: the items wait without their leases, as the guard fails open
        }
        List<CallbackStore.Early> early = store.park(parking.stream().map(p -> held.containsKey(p.itemId())
                ? new CallbackStore.Parking(p.itemId(), p.attempt(), p.waitFor(), held.get(p.itemId()).member()) : p).toList());
        // Those whose callback came first wait no more: their leases go back at once.
        leases.release(early.stream().map(e -> held.get(e.itemId())).filter(Objects::nonNull).toList());
        return early;
    }
}
