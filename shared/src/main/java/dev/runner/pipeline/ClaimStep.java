package dev.runner.pipeline;

import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemStore;
import dev.runner.ordering.RecordOrder;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The claiming step of {@link ItemWorker}: the admitted items are claimed for an attempt in one
 * statement; only claimed items are called. An item whose message came back before it was due is
 * deferred to its time, and one not claimable (ended, parked, another worker's, or waiting for an earlier
 * item of its record, {@link RecordOrder}) is skipped.
 */
public final class ClaimStep {

    /** The claimed items to call, by group, and every claim (its attempt and payload). */
    record Claimed(Map<HandlerRef, List<Item>> toCall, Map<UUID, ItemStore.Claimed> claims) {
        static final Claimed NONE = new Claimed(Map.of(), Map.of());
    }

    private final RecordOrder order;
    private final Duration lease;

    /** @param lease how long a claim keeps other workers off an item */
    public ClaimStep(RecordOrder order, Duration lease) {
        this.order = order;
        this.lease = lease;
    }

    /** @param ordered the groups whose handler goes one item at a time per record */
    Claimed claim(Map<HandlerRef, List<Item>> groups, Set<HandlerRef> ordered, Set<UUID> admittedIds, List<Fate> fates) {
        List<UUID> orderedIds = new ArrayList<>();
        ordered.forEach(group -> groups.getOrDefault(group, List.of()).stream().map(Item::itemId).filter(admittedIds::contains)
                .forEach(orderedIds::add));
        return sort(groups, admittedIds, order.claim(admittedIds, orderedIds, lease), fates);
    }

    /** What a claim means for each admitted item, the groups' order kept. */
    static Claimed sort(Map<HandlerRef, List<Item>> groups, Set<UUID> admittedIds, ItemStore.Claim claim, List<Fate> fates) {
        Map<HandlerRef, List<Item>> toCall = new LinkedHashMap<>();
        groups.forEach((group, members) -> {
            for (Item item : members) {
                if (!admittedIds.contains(item.itemId())) {
                    continue;
                }
                if (claim.claimed().containsKey(item.itemId())) {
                    toCall.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                } else if (claim.early().containsKey(item.itemId())) {
                    // Its message came back before the item was due: keep it alive, at its time, not twice now.
                    fates.add(new Fate.Deferred(item, claim.early().get(item.itemId()), Reason.NOT_DUE));
                } else {
                    fates.add(new Fate.Skipped(item));
                }
            }
        });
        return new Claimed(toCall, claim.claimed());
    }
}
