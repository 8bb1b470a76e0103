package dev.runner.coalescing;

import dev.runner.delivery.DeliveryStore;
import dev.runner.item.ItemJob;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the intake sends once the accept has coalesced: superseded items get no message (the item that superseded
 * them carries their update, or a later one), an item that waits for its record's later updates goes delayed by
 * its window, the rest as they are.
 */
public final class Coalescing {

    /**
     * @param jobs        the items to send
     * @param waitSeconds the least delay of those that wait their window, by item id
     * @param superseded  the items ended superseded, which get no message
     */
    public record Sends(List<ItemJob> jobs, Map<UUID, Integer> waitSeconds, List<ItemJob> superseded) {
        public Set<String> tenantsSuperseded() {
            Set<String> tenants = new LinkedHashSet<>();
            superseded.forEach(job -> tenants.add(job.tenantId()));
            return tenants;
        }
    }

    private Coalescing() {}

    public static Sends sends(List<ItemJob> jobs, Map<UUID, DeliveryStore.Coalesced> coalesced) {
        if (coalesced.isEmpty()) {
            return new Sends(jobs, Map.of(), List.of());
        }
        List<ItemJob> toSend = new ArrayList<>(jobs.size());
        List<ItemJob> superseded = new ArrayList<>();
        Map<UUID, Integer> waits = new HashMap<>();
        for (ItemJob job : jobs) {
            DeliveryStore.Coalesced fate = coalesced.get(job.itemId());
            if (fate == null) {
                toSend.add(job);
            } else if (fate.supersededBy() != null) {
                superseded.add(job);
            } else {
                toSend.add(job);
                waits.put(job.itemId(), waitSeconds(fate.waitMs()));
            }
        }
        return new Sends(toSend, waits, superseded);
    }

    /** A window in SQS's whole seconds, rounded up: the item's row is due at the window's end, its message no sooner. */
    static int waitSeconds(int waitMs) {
        return (int) Math.min(900, Math.ceilDiv(Math.max(0, waitMs), 1000));
    }
}
