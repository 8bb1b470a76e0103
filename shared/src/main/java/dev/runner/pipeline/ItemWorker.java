package dev.runner.pipeline;

import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.queue.QueueMessage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Processes one SQS batch of items (docs/item-lifecycle.md) through its steps: parse, group by
 * handler, then {@link AdmissionStep admission} (park what is disabled or paused, admit through
 * Redis), {@link ClaimStep claiming} (Postgres), {@link CallStep calling} the handlers and
 * reporting to the guard, and {@link SettleStep settling}. What one all-success batch costs:
 * 3 Postgres statements (claim, record, complete), one handler call per {@code batch_size} items
 * for batch handlers, one Redis round trip (admit; a report only when there is something to
 * report), no SQS request of its own (receive and delete belong to the event source mapping).
 * While tenants compete for a handler's leases, a group may be granted leases for some tenants'
 * items only: the others are asked again in a second round once the first round's calls are done
 * (a round trip, a claim statement and a report), and go back to SQS only if no lease is free then.
 *
 * <p>A handler group's failure, however it fails, becomes retryable failures of that group's
 * items: the other groups' outcomes are recorded all the same. Handler calls end by the
 * invocation's deadline less what recording needs, so the batch always settles in time.
 */
public final class ItemWorker {

    private static final Log LOG = Log.of(ItemWorker.class);
    /** What recording a batch's outcomes may take after its handler calls. */
    private static final long RECORD_RESERVE_MS = 5_000;

    /** Message ids the event source must not delete: they come back after their visibility timeout. */
    public record BatchResult(List<String> failedMessageIds) {}

    private final Integrations integrations;
    private final DeadLetterStore deadLetters;
    private final AdmissionStep admission;
    private final ClaimStep claiming;
    private final CallStep calling;
    private final SettleStep settling;

    public ItemWorker(Integrations integrations, DeadLetterStore deadLetters, AdmissionStep admission, ClaimStep claiming,
                      CallStep calling, SettleStep settling) {
        this.integrations = integrations;
        this.deadLetters = deadLetters;
        this.admission = admission;
        this.claiming = claiming;
        this.calling = calling;
        this.settling = settling;
    }

    /** @param remainingMillis the invocation's time left: handler calls never outlive it */
    public BatchResult process(List<QueueMessage> messages, LongSupplier remainingMillis) {
        long callDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1_000, remainingMillis.getAsLong() - RECORD_RESERVE_MS));
        List<Fate> fates = new ArrayList<>();
        Map<UUID, Item> byItem = new LinkedHashMap<>();
        for (Item item : parse(messages)) {
            if (byItem.putIfAbsent(item.itemId(), item) != null) {
                fates.add(new Fate.Skipped(item)); // the same item twice in one batch: one delivery is enough
            }
        }
        if (byItem.isEmpty()) {
            return new BatchResult(List.of());
        }
        Map<HandlerRef, List<Item>> groups = group(byItem.values());
        Map<HandlerRef, HandlerSpec> specs = new HashMap<>();
        groups.keySet().forEach(g -> integrations.handlerOrRefresh(g.integrationKey(), g.handlerKey()).ifPresent(spec -> specs.put(g, spec)));

        admission.parkDisabled(groups, fates);
        // Rounds: while tenants compete, a group may be granted leases for some tenants' items only;
        // the others are asked again once this round's calls are done (its leases given back), not sent back to SQS.
        Map<HandlerRef, List<Item>> asking = round(groups, specs, byItem, fates, callDeadline, remainingMillis, true);
        if (!asking.isEmpty()) {
            round(asking, specs, byItem, fates, callDeadline, remainingMillis, false);
        }
        Set<String> tenants = new LinkedHashSet<>();
        byItem.values().forEach(item -> tenants.add(item.job().tenantId()));
        return new BatchResult(settling.settle(fates, tenants));
    }

    /**
     * One round of admission, claim, calls and report; returns the items to ask again now that its
     * calls are done. The first round's items may wait for a lease in the invocation; a second
     * round's take one free then or are deferred (it asks again nothing).
     */
    private Map<HandlerRef, List<Item>> round(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, Map<UUID, Item> byItem,
                                              List<Fate> fates, long callDeadline, LongSupplier remainingMillis, boolean first) {
        Admitted admitted = admission.admit(groups, specs, fates, callDeadline, remainingMillis, first);
        CallStep.BatchCalls batchCalls = CallStep.BatchCalls.NONE;
        ClaimStep.Claimed claimed = ClaimStep.Claimed.NONE;
        try {
            // Inside the try: whatever fails from here on (Postgres at park or claim, a call), the leases go back.
            admitted.paused().forEach((group, members) -> admission.park(group, members, fates));
            claimed = claiming.claim(groups, admitted.itemIds(), fates);
            batchCalls = calling.call(claimed.toCall(), specs, admitted, claimed.claims(), callDeadline);
        } finally {
            // Leases are given back even when a call crashed, or a low-concurrency handler would stall until they expire.
            calling.report(admitted, batchCalls.results());
        }
        Map<UUID, ItemStore.Claimed> claims = claimed.claims();
        for (CallResult result : batchCalls.results()) {
            result.outcomes().forEach((itemId, outcome) ->
                    fates.add(new Fate.Called(byItem.get(itemId), claims.get(itemId).attempt(), outcome)));
        }
        fates.addAll(batchCalls.uncalled());
        return admitted.later();
    }

    /** Items of one handler, most urgent first: admission serves them in this order. */
    static Map<HandlerRef, List<Item>> group(Collection<Item> received) {
        Map<HandlerRef, List<Item>> groups = new LinkedHashMap<>();
        received.stream()
                .sorted(Comparator.comparingInt(r -> r.job().trigger().priority()))
                .forEach(r -> groups.computeIfAbsent(new HandlerRef(r.job().integrationKey(), r.job().handlerKey()), g -> new ArrayList<>()).add(r));
        return groups;
    }

    /** Unreadable messages are kept as dead letters (they would never parse); the rest become items. */
    private List<Item> parse(List<QueueMessage> messages) {
        List<Item> received = new ArrayList<>(messages.size());
        List<DeadLetterStore.DeadLetter> unreadable = new ArrayList<>();
        for (QueueMessage message : messages) {
            try {
                received.add(new Item(message, ItemJob.fromJson(Json.parse(message.body()))));
            } catch (Json.InvalidJsonException e) {
                unreadable.add(new DeadLetterStore.DeadLetter(message.sourceQueue(), "unreadable item job: " + e.getMessage(),
                        message.body(), Map.of("messageId", message.messageId())));
            }
        }
        if (!unreadable.isEmpty()) {
            deadLetters.keep(unreadable);
            LOG.warn("kept unreadable messages", "count", unreadable.size());
        }
        return received;
    }
}
