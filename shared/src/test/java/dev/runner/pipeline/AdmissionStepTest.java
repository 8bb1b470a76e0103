package dev.runner.pipeline;

import dev.runner.guard.Admission;
import dev.runner.guard.ConcurrencyAndRate;
import dev.runner.guard.DeferReason;
import dev.runner.guard.FailOpen;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupRequest;
import dev.runner.integration.Direction;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the admission step reads the guard's answers, and when it waits for a lease: no Redis. */
class AdmissionStepTest {

    private static final HandlerRef LEADS = new HandlerRef("crm", "leads");
    private static final HandlerSpec BATCH_SPEC = new HandlerSpec("leads", URI.create("https://h.example/leads"), Direction.INBOUND,
            true, new HandlerSpec.Configs(2, 60, 5, 3_000));

    @Test
    void theRequestCarriesTheItemsInOrderWithTheHandlersLimitsAndItsCallSize() {
        Item webhook = TestItems.item("t-1", Trigger.WEBHOOK);
        Item manual = TestItems.item("t-2", Trigger.MANUAL);

        GroupRequest request = AdmissionStep.request(LEADS, BATCH_SPEC, List.of(webhook, manual), Duration.ofMillis(80), 9_000, tenant -> 1);

        assertEquals(List.of(webhook.itemId().toString(), manual.itemId().toString()),
                request.items().stream().map(c -> c.itemId()).toList());
        assertEquals(List.of("t-1", "t-2"), request.items().stream().map(c -> c.tenantId()).toList());
        assertEquals(new ConcurrencyAndRate(2, 60), request.limits());
        assertEquals(5, request.itemsPerCall(), "a batch handler's call carries batch_size items");
        assertEquals(Duration.ofMillis(80), request.expectedCall());
        assertEquals(Duration.ofSeconds(9), request.holdFor());
        assertEquals(Duration.ZERO, AdmissionStep.request(LEADS, BATCH_SPEC, List.of(manual), Duration.ZERO, -5, tenant -> 1).holdFor(),
                "no time left holds nothing");
    }

    @Test
    void eachAnswerBecomesItsFateAndOnlyThoseFindingNoLeaseMayWait() {
        Item admitted = TestItems.item("t-1", Trigger.WEBHOOK);
        Item leaseSoon = TestItems.item("t-1", Trigger.WEBHOOK);
        Item rateLimited = TestItems.item("t-1", Trigger.WEBHOOK);
        Item paused = TestItems.item("t-1", Trigger.WEBHOOK);
        List<Item> members = List.of(admitted, leaseSoon, rateLimited, paused);
        GroupRequest request = AdmissionStep.request(LEADS, BATCH_SPEC, members, Duration.ofMillis(50), 60_000, tenant -> 1);
        GroupAdmission answer = new GroupAdmission(request, List.of(
                new Admission.Admitted(admitted.itemId().toString()),
                new Admission.Deferred(leaseSoon.itemId().toString(), Duration.ofMillis(30), DeferReason.HANDLER_CONCURRENCY),
                new Admission.Deferred(rateLimited.itemId().toString(), Duration.ofSeconds(4), DeferReason.HANDLER_RATE),
                new Admission.Paused(paused.itemId().toString())));
        List<Fate> fates = new ArrayList<>();
        var decisions = new AdmissionStep.Decisions(fates);

        Map<HandlerRef, List<Item>> waiting = decisions.take(List.of(answer), byId(members), (group, delay) -> true);

        assertEquals(Set.of(admitted.itemId()), decisions.admittedIds);
        assertEquals(Map.of(LEADS, answer), decisions.byGroup);
        assertEquals(Map.of(), waiting, "a group with calls to make does not hold its leases idle waiting for more");
        assertEquals(Map.of(LEADS, List.of(leaseSoon)), decisions.later, "it is asked again once the group's calls are done");
        assertEquals(List.of(new Fate.Deferred(rateLimited, Duration.ofSeconds(4), Reason.HANDLER_RATE)), fates,
                "a rate deferral is a fate at once: waiting for it would not free a lease");
        assertEquals(Map.of(LEADS, List.of(paused)), decisions.paused);
        assertTrue(decisions.failedOpen.isEmpty());

        GroupAdmission none = new GroupAdmission(request, List.of(
                new Admission.Deferred(admitted.itemId().toString(), Duration.ofMillis(30), DeferReason.HANDLER_CONCURRENCY),
                new Admission.Deferred(leaseSoon.itemId().toString(), Duration.ofMillis(30), DeferReason.ADAPTIVE_LIMIT),
                new Admission.Deferred(rateLimited.itemId().toString(), Duration.ofSeconds(4), DeferReason.HANDLER_RATE),
                new Admission.Paused(paused.itemId().toString())));
        var again = new AdmissionStep.Decisions(new ArrayList<>());
        assertEquals(Map.of(LEADS, List.of(admitted, leaseSoon)), again.take(List.of(none), byId(members), (group, delay) -> true),
                "with no lease at all, a concurrency deferral (the learnt limit's too) may wait for one");
        assertEquals(Duration.ofMillis(30).toNanos(), again.soonestNanos);
    }

    @Test
    void aConcurrencyDeferralThatMayNotWaitIsAFateAndAFailOpenIsRemembered() {
        Item item = TestItems.item("t-1", Trigger.MANUAL);
        GroupRequest request = AdmissionStep.request(LEADS, BATCH_SPEC, List.of(item), Duration.ofMillis(50), 60_000, tenant -> 1);
        GroupAdmission deferred = new GroupAdmission(request, List.of(
                new Admission.Deferred(item.itemId().toString(), Duration.ofSeconds(20), DeferReason.HANDLER_CONCURRENCY)),
                FailOpen.REDIS_UNAVAILABLE, false, List.of(), 0);
        List<Fate> fates = new ArrayList<>();
        var decisions = new AdmissionStep.Decisions(fates);

        Map<HandlerRef, List<Item>> waiting = decisions.take(List.of(deferred), byId(List.of(item)), (group, delay) -> false);

        assertTrue(waiting.isEmpty());
        assertEquals(List.of(new Fate.Deferred(item, Duration.ofSeconds(20), Reason.HANDLER_CONCURRENCY)), fates);
        assertEquals(Set.of(LEADS), decisions.failedOpen, "Postgres is asked for the pauses Redis could not show");
    }

    @Test
    void itWaitsOnlyForALeaseBackInTheWaitAndWithTimeToCallAfter() {
        long now = 1_000_000_000L;
        long waitUntil = now + ms(200);
        long callDeadline = now + ms(10_000);

        assertTrue(AdmissionStep.canWait(now, Duration.ofMillis(150), waitUntil, callDeadline, Duration.ofMillis(100)));
        assertFalse(AdmissionStep.canWait(now, Duration.ofMillis(250), waitUntil, callDeadline, Duration.ofMillis(100)),
                "the lease comes back after the wait ends");
        assertFalse(AdmissionStep.canWait(now, Duration.ofMillis(150), waitUntil, now + ms(300), Duration.ofMillis(100)),
                "two expected calls no longer fit after it");
    }

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }

    private static Map<String, Item> byId(List<Item> items) {
        Map<String, Item> byId = new HashMap<>();
        items.forEach(item -> byId.put(item.itemId().toString(), item));
        return byId;
    }
}
