package dev.runner.pipeline;

import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.ordering.RecordOrder;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.queue.QueueMessage;

import java.time.Duration;
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
 * Processes one SQS batch of items (docs/item-lifecycle.md) through its steps: parse (a message
 * may carry several items, {@link ItemMessage}; each is then handled on its own), group by
 * handler, then {@link AdmissionStep admission} (park what is disabled or paused, admit through
 * Redis), {@link ClaimStep claiming} (Postgres), {@link CallStep calling} the handlers and
 * reporting to the guard, and {@link SettleStep settling}; a limited handler's items in
 * {@link #waves waves}. What one all-success batch costs: 2 Postgres statements (claim, a claim
 * more per further wave; record, which completes the runs it ended) and a third, the completion
 * check after the record, when a run may still have items ending elsewhere (a big run's), one
 * handler call per {@code batch_size} items
 * for batch handlers, one Redis round trip (admit; a report only when there is something to
 * report), no SQS request of its own (receive and delete belong to the event source mapping) when
 * nothing goes again. While tenants compete for a handler's leases, a wave's group may be granted
 * leases for some tenants' items only: the others are asked again in a second round once the first
 * round's calls are done (a round trip, a claim statement and a report), and go back to SQS only if
 * no lease is free then.
 *
 * <p>A handler group's failure, however it fails, becomes retryable failures of that group's
 * items: the other groups' outcomes are recorded all the same. Handler calls end by the
 * invocation's deadline less what recording needs, so the batch always settles in time.
 */
public final class ItemWorker {

    private static final Log LOG = Log.of(ItemWorker.class);
    /** What recording a batch's outcomes may take after its handler calls. */
    private static final long RECORD_RESERVE_MS = 5_000;
    /** Calls a lane of a limited handler makes in one wave (see {@link #waves}). */
    static final int WAVE_CALLS_PER_LANE = 8;
    /**
     * Items of a handler without a concurrency limit in one wave (rounded up to whole calls), all
     * called at once: a batch of single-item messages' worth, so a handler that goes down meets no
     * more calls of a batch before its breaker is asked again than it did when a message was an item.
     */
    static final int UNLIMITED_WAVE_ITEMS = 20;
    /** A wave after the first starts only with this much of the call time left. */
    private static final long LATEST_WAVE_NANOS = TimeUnit.SECONDS.toNanos(1);

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
        Set<HandlerRef> ordered = new LinkedHashSet<>();
        specs.forEach((group, spec) -> {
            if (RecordOrder.ordered(spec)) {
                ordered.add(group);
            }
        });
        List<Map<HandlerRef, List<Item>>> waves = waves(groups, specs);
        long started = System.nanoTime();
        for (int i = 0; i < waves.size(); i++) {
            if (i > 0 && callDeadline - System.nanoTime() < LATEST_WAVE_NANOS) {
                // No time for another wave's calls: the rest goes again, unclaimed, no attempt used, when
                // this invocation would have come to it at the pace of its waves so far (not at once, to bounce).
                Duration later = Duration.ofNanos((System.nanoTime() - started) / i * (waves.size() - i));
                waves.subList(i, waves.size()).forEach(wave -> wave.values().forEach(members ->
                        members.forEach(item -> fates.add(new Fate.Deferred(item, later, Reason.OUT_OF_TIME)))));
                break;
            }
            callWave(waves.get(i), specs, ordered, byItem, fates, callDeadline, remainingMillis);
        }
        Set<String> tenants = new LinkedHashSet<>();
        byItem.values().forEach(item -> tenants.add(item.job().tenantId()));
        return new BatchResult(settling.settle(fates, tenants, ordered));
    }

    /**
     * One wave in rounds: while tenants compete, a group may be granted leases for some tenants' items
     * only; the others are asked again once this round's calls are done (its leases given back), not
     * sent back to SQS. Its outcomes become fates, settled with the batch's.
     */
    private void callWave(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, Set<HandlerRef> ordered,
                          Map<UUID, Item> byItem, List<Fate> fates, long callDeadline, LongSupplier remainingMillis) {
        Map<HandlerRef, List<Item>> asking = round(groups, specs, ordered, byItem, fates, callDeadline, remainingMillis, true);
        if (!asking.isEmpty()) {
            round(asking, specs, ordered, byItem, fates, callDeadline, remainingMillis, false);
        }
    }

    /**
     * One round of admission, claim, calls and report; returns the items to ask again now that its
     * calls are done. The first round's items may wait for a lease in the invocation; a second
     * round's take one free then or are deferred (it asks again nothing).
     */
    private Map<HandlerRef, List<Item>> round(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, Set<HandlerRef> ordered,
                                              Map<UUID, Item> byItem, List<Fate> fates, long callDeadline, LongSupplier remainingMillis,
                                              boolean first) {
        Admitted admitted = admission.admit(groups, specs, fates, callDeadline, remainingMillis, first);
        CallStep.BatchCalls batchCalls = CallStep.BatchCalls.NONE;
        ClaimStep.Claimed claimed = ClaimStep.Claimed.NONE;
        try {
            // Inside the try: whatever fails from here on (Postgres at park or claim, a call), the leases go back.
            admitted.paused().forEach((group, members) -> admission.park(group, members, fates));
            claimed = claiming.claim(groups, ordered, admitted.itemIds(), fates);
            admission.giveBackUnclaimed(groups, admitted, claimed.claims().keySet());
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

    /**
     * The batch in waves, each group's items split by what its concurrency leases may call in one
     * wave ({@link #WAVE_CALLS_PER_LANE} calls a lane): leases are granted per admission and lanes
     * keep theirs until their calls run out, so a batch of many items on a limited handler asks
     * again after each wave and follows the leases other workers gave back meanwhile, instead of
     * working through everything on the few it got first. A handler without a concurrency limit
     * calls a wave's items all at once, so its waves hold {@link #UNLIMITED_WAVE_ITEMS} items.
     */
    static List<Map<HandlerRef, List<Item>>> waves(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs) {
        List<Map<HandlerRef, List<Item>>> waves = new ArrayList<>();
        groups.forEach((group, members) -> {
            HandlerSpec spec = specs.get(group);
            int perCall = spec == null || !spec.batch() ? 1 : spec.configs().batchSize();
            int size = spec == null ? members.size()
                    : spec.configs().concurrency() == 0 ? perCall * Math.ceilDiv(UNLIMITED_WAVE_ITEMS, perCall)
                    : spec.configs().concurrency() * perCall * WAVE_CALLS_PER_LANE;
            for (int from = 0, wave = 0; from < members.size(); from += size, wave++) {
                if (waves.size() == wave) {
                    waves.add(new LinkedHashMap<>());
                }
                waves.get(wave).put(group, new ArrayList<>(members.subList(from, Math.min(members.size(), from + size))));
            }
        });
        return waves;
    }

    /** Items of one handler, most urgent first: admission serves them in this order. */
    static Map<HandlerRef, List<Item>> group(Collection<Item> received) {
        Map<HandlerRef, List<Item>> groups = new LinkedHashMap<>();
        received.stream()
                .sorted(Comparator.comparingInt(r -> r.job().trigger().priority()))
                .forEach(r -> groups.computeIfAbsent(new HandlerRef(r.job().integrationKey(), r.job().handlerKey()), g -> new ArrayList<>()).add(r));
        return groups;
    }

    /** Unreadable messages are kept as dead letters (they would never parse); the rest become items, several for a pack. */
    private List<Item> parse(List<QueueMessage> messages) {
        List<Item> received = new ArrayList<>(messages.size());
        List<DeadLetterStore.DeadLetter> unreadable = new ArrayList<>();
        for (QueueMessage message : messages) {
            try {
                for (ItemJob job : ItemMessage.read(Json.parse(message.body()))) {
                    received.add(new Item(message, job));
                }
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
