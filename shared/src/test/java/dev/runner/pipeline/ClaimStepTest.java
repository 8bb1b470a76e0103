package dev.runner.pipeline;

import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a claim means for each admitted item: no Postgres. */
class ClaimStepTest {

    private static final HandlerRef LEADS = new HandlerRef("crm", "leads");
    private static final HandlerRef CONTACTS = new HandlerRef("crm", "contacts");

    @Test
    void claimedItemsAreCalledEarlyOnesWaitForTheirTimeTheRestAreSkippedAndTheUnadmittedLeftAlone() {
        Item claimed = TestItems.item("t-1", Trigger.WEBHOOK);
        Item early = TestItems.item("t-1", Trigger.WEBHOOK);
        Item notClaimable = TestItems.item("t-1", Trigger.WEBHOOK);
        Item notAdmitted = TestItems.item("t-1", Trigger.WEBHOOK);
        Item otherGroup = TestItems.item("t-2", Trigger.MANUAL);
        Map<HandlerRef, List<Item>> groups = new LinkedHashMap<>();
        groups.put(LEADS, List.of(claimed, early, notClaimable, notAdmitted));
        groups.put(CONTACTS, List.of(otherGroup));
        ItemStore.Claimed claim = new ItemStore.Claimed(1, Json.object());
        ItemStore.Claim answer = new ItemStore.Claim(Map.of(claimed.itemId(), claim, otherGroup.itemId(), claim),
                Map.of(early.itemId(), Duration.ofSeconds(42)));
        List<Fate> fates = new ArrayList<>();

        ClaimStep.Claimed sorted = ClaimStep.sort(groups,
                Set.of(claimed.itemId(), early.itemId(), notClaimable.itemId(), otherGroup.itemId()), answer, fates);

        assertEquals(Map.of(LEADS, List.of(claimed), CONTACTS, List.of(otherGroup)), sorted.toCall());
        assertEquals(List.of(LEADS, CONTACTS), List.copyOf(sorted.toCall().keySet()), "the groups keep their order");
        assertEquals(answer.claimed(), sorted.claims());
        assertEquals(List.of(new Fate.Deferred(early, Duration.ofSeconds(42), Reason.NOT_DUE), new Fate.Skipped(notClaimable)), fates,
                "an item not admitted has its fate from admission, none here");
    }
}
