package dev.runner.coalescing;

import dev.runner.delivery.DeliveryStore;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CoalescingTest {

    private final UUID run = UUID.randomUUID();

    @Test
    void supersededItemsGetNoMessageAndTheOneThatWaitsGoesDelayedByItsWindow() {
        ItemJob waits = job("c-1");
        ItemJob superseded = job("c-1");
        ItemJob other = job("c-2");
        var sends = Coalescing.sends(List.of(waits, superseded, other), Map.of(
                waits.itemId(), new DeliveryStore.Coalesced(waits.itemId(), null, 1_500),
                superseded.itemId(), new DeliveryStore.Coalesced(superseded.itemId(), waits.itemId(), 0)));

        assertEquals(List.of(waits, other), sends.jobs());
        assertEquals(List.of(superseded), sends.superseded());
        assertEquals(Map.of(waits.itemId(), 2), sends.waitSeconds(), "a window in SQS's whole seconds, rounded up");
    }

    @Test
    void withoutCoalescingEverythingGoesAtOnce() {
        List<ItemJob> jobs = List.of(job("a"), job("b"));
        var sends = Coalescing.sends(jobs, Map.of());
        assertEquals(jobs, sends.jobs());
        assertEquals(Map.of(), sends.waitSeconds());
    }

    @Test
    void theLongestWindowIsSqssLongestDelay() {
        assertEquals(900, Coalescing.waitSeconds(900_000));
        assertEquals(1, Coalescing.waitSeconds(1));
        assertEquals(0, Coalescing.waitSeconds(0));
    }

    private ItemJob job(String externalId) {
        return new ItemJob(run, UUID.randomUUID(), "t-1", "crm", "contacts", Direction.INBOUND, Trigger.WEBHOOK, externalId, 0, 0);
    }
}
