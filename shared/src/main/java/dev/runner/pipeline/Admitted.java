package dev.runner.pipeline;

import dev.runner.guard.GroupAdmission;
import dev.runner.integration.HandlerRef;
import dev.runner.pipeline.Settlement.Item;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What admission let through: the items, per group the admission itself (its leases, the lanes
 * they allow, the time its rate entries carry), and the items to park (paused handlers).
 * {@code leasesReleased} fills as lanes give their leases back early.
 */
record Admitted(Set<UUID> itemIds, Map<HandlerRef, GroupAdmission> byGroup, Map<HandlerRef, List<Item>> paused,
                Set<String> leasesReleased) {

    Admitted(Set<UUID> itemIds, Map<HandlerRef, GroupAdmission> byGroup, Map<HandlerRef, List<Item>> paused) {
        this(itemIds, byGroup, paused, ConcurrentHashMap.newKeySet());
    }

    /** The group's leases still held: those its lanes did not give back early. */
    List<String> leasesHeld(GroupAdmission admission) {
        return admission.leaseTokens().stream().filter(token -> !leasesReleased.contains(token)).toList();
    }
}
