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
 * they allow, the time its rate entries carry), the items to park (paused handlers), and the items
 * to ask again once this round's calls are done (a group granted leases for some tenants' items
 * only, while tenants compete). {@code leasesReleased} fills as lanes give their leases back early.
 */
record Admitted(Set<UUID> itemIds, Map<HandlerRef, GroupAdmission> byGroup, Map<HandlerRef, List<Item>> paused,
                Map<HandlerRef, List<Item>> later, Set<String> leasesReleased) {

    Admitted(Set<UUID> itemIds, Map<HandlerRef, GroupAdmission> byGroup, Map<HandlerRef, List<Item>> paused) {
        this(itemIds, byGroup, paused, Map.of(), ConcurrentHashMap.newKeySet());
    }

    Admitted(Set<UUID> itemIds, Map<HandlerRef, GroupAdmission> byGroup, Map<HandlerRef, List<Item>> paused,
             Map<HandlerRef, List<Item>> later) {
        this(itemIds, byGroup, paused, later, ConcurrentHashMap.newKeySet());
    }

    /** The group's leases still held: those its lanes did not give back early. */
    List<String> leasesHeld(GroupAdmission admission) {
        return admission.leaseTokens().stream().filter(token -> !leasesReleased.contains(token)).toList();
    }
}
