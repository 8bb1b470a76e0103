package dev.runner.pipeline;

import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemStore;
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
 * deferred to its time, and one not claimable (ended, parked, another worker's) is skipped.
 */
public final class ClaimStep {

    /** The claimed items to call, by group, and every claim (its attempt and payload). */
    record Claimed(Map<HandlerRef, List<Item>> toCall, Map<UUID, ItemStore.Claimed> claims) {
        static final Claimed NONE = new Claimed(Map.of(), Map.of());
    }

    private final ItemStore items;
    private final Duration lease;

    /** @param lease how long a claim keeps other workers off an item */
    public ClaimStep(ItemStore items, Duration lease) {
        this.items = items;
        this.lease = lease;
    }

    Claimed claim(Map<HandlerRef, List<Item>> groups, Set<UUID> admittedIds, List<Fate> fates) {
        return sort(groups, admittedIds, items.claim(admittedIds, lease), fates);
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
