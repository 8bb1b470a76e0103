package dev.runner.pipeline;

import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.pipeline.CallResult.Observation;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When a batch call is called again by tenant, and what its parts come to. No I/O. */
class TenantSplitTest {

    private static final HandlerRef GROUP = new HandlerRef("crm", "leads");

    @Test
    void onlyAMixedBatchThatFailedWholeIsSplit() {
        List<Item> mixed = List.of(TestItems.item("a", Trigger.MANUAL), TestItems.item("b", Trigger.MANUAL));
        List<Item> single = List.of(TestItems.item("a", Trigger.MANUAL), TestItems.item("a", Trigger.MANUAL));
        assertTrue(TenantSplit.wanted(CallResult.failed(GROUP, mixed, "500"), mixed));
        assertFalse(TenantSplit.wanted(CallResult.failed(GROUP, single, "500"), single), "one tenant: its failure is its own");
        Map<UUID, Outcome> oneFailed = Map.of(mixed.get(0).itemId(), new Outcome.Failed("bad record", true),
                mixed.get(1).itemId(), new Outcome.Succeeded());
        assertFalse(TenantSplit.wanted(CallResult.of(GROUP, oneFailed), mixed), "answered per item: already per tenant");
    }

    @Test
    void eachTenantsPartIsCalledOnItsOwnAndAPartWithNoTimeLeftIsObservedByNoOne() {
        Item a1 = TestItems.item("a", Trigger.MANUAL);
        Item b1 = TestItems.item("b", Trigger.MANUAL);
        Item a2 = TestItems.item("a", Trigger.MANUAL);
        Item c1 = TestItems.item("c", Trigger.MANUAL);
        List<Item> chunk = List.of(a1, b1, a2, c1);
        CallResult whole = CallResult.failed(GROUP, chunk, "handler answered 500");
        List<List<Item>> parts = new ArrayList<>();

        List<CallResult> results = TenantSplit.callEachTenant(whole, chunk, part -> {
            parts.add(part);
            String tenant = part.getFirst().job().tenantId();
            if (tenant.equals("c")) {
                return null;
            }
            Map<UUID, Outcome> outcomes = new java.util.HashMap<>();
            part.forEach(item -> outcomes.put(item.itemId(), tenant.equals("b") ? new Outcome.Failed("500", true) : new Outcome.Succeeded()));
            return CallResult.of(GROUP, outcomes);
        });

        assertEquals(List.of(List.of(a1, a2), List.of(b1), List.of(c1)), parts, "by tenant, in the call's order");
        assertEquals(List.of(Observation.UP, Observation.DOWN, Observation.NONE), results.stream().map(CallResult::observation).toList());
        assertEquals(whole.outcomes().get(c1.itemId()), results.get(2).outcomes().get(c1.itemId()), "no time for c: the whole call's failure");
    }
}
