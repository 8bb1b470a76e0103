package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.guard.GuardFixture.admittedIds;
import static dev.runner.guard.GuardFixture.count;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tenant sliding window of admitTenant-5.lua and its interplay with the handler script, on real Redis (single and cluster). */
class TenantWindowIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void windowHoldsAtItsEdges(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(5, Duration.ofSeconds(5)));
        assertEquals(5, count(admit(f, "a", "acme", 5), Admission.Admitted.class));

        f.clock.advance(Duration.ofMillis(59_999));
        var full = assertInstanceOf(Admission.Deferred.class, admit(f, "b", "acme", 1).getFirst());
        assertEquals(DeferReason.TENANT_LIMIT, full.reason());
        assertEquals(Duration.ofSeconds(5), full.delay(), "room comes in 1 ms, but no deferral is shorter than shortestDeferral");
        assertEquals(5, count(admit(f, "other", "globex", 5), Admission.Admitted.class), "other tenants are not held back");

        f.clock.advance(Duration.ofMillis(1));
        assertEquals(4, count(admit(f, "c", "acme", 5), Admission.Admitted.class),
                "b-0 holds a reserved slot 5 s ahead, so the window has room for 4");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void deferralsAreComputedAndSpreadOverFutureWindows(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)));
        long start = f.clock.millis();
        // 20,000 items of one tenant arrive in batches of 10 within one second.
        Map<String, Long> dueAt = new HashMap<>();
        int admittedNow = 0;
        for (int batch = 0; batch < 2000; batch++) {
            for (Admission decision : admit(f, "b" + batch, "bulk", 10)) {
                switch (decision) {
                    case Admission.Admitted a -> admittedNow++;
                    case Admission.Deferred d -> {
                        assertEquals(DeferReason.TENANT_LIMIT, d.reason());
                        dueAt.put(d.itemId(), f.clock.millis() + d.delay().toMillis());
                    }
                    case Admission.Paused p -> throw new AssertionError("not paused: " + p);
                }
            }
            if (batch % 4 == 0) {
                f.clock.advance(Duration.ofMillis(2));
            }
        }
        assertEquals(1000, admittedNow);
        assertEquals(19_000, dueAt.size());
        // Slot k of the deferred items falls in minute 1 + k / 1000: each future minute gets exactly 1,000.
        Map<Long, Integer> perMinute = new HashMap<>();
        dueAt.values().forEach(t -> perMinute.merge((t - start) / 60_000, 1, Integer::sum));
        for (long minute = 1; minute <= 19; minute++) {
            assertEquals(1000, perMinute.get(minute), "minute " + minute);
        }

        // Coming back at its slot, every item is admitted at once: one deferral per item.
        List<Map.Entry<String, Long>> byDue = new ArrayList<>(dueAt.entrySet());
        byDue.sort(Map.Entry.comparingByValue());
        int readmitted = 0;
        for (int i = 0; i < byDue.size(); i += 10) {
            List<Map.Entry<String, Long>> batch = byDue.subList(i, Math.min(i + 10, byDue.size()));
            long due = batch.getLast().getValue();
            if (due > f.clock.millis()) {
                f.clock.advance(Duration.ofMillis(due - f.clock.millis()));
            }
            List<Candidate> back = batch.stream().map(e -> new Candidate(e.getKey(), "bulk", Trigger.SCHEDULE.priority())).toList();
            readmitted += (int) count(f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, back)), Admission.Admitted.class);
        }
        assertEquals(19_000, readmitted);
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void earlyReturnWaitsForItsOwnSlotWithoutTakingAnother(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(2, Duration.ofSeconds(5)));
        admit(f, "a", "acme", 2);
        var first = assertInstanceOf(Admission.Deferred.class, admit(f, "b", "acme", 1).getFirst());
        assertEquals(Duration.ofSeconds(60), first.delay());

        // SQS caps DelaySeconds at 15 min; an item may come back before its slot.
        f.clock.advance(Duration.ofSeconds(20));
        var again = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED,
                List.of(new Candidate("b-0", "acme", Trigger.SCHEDULE.priority())))).getFirst());
        assertEquals(Duration.ofSeconds(40), again.delay());
        var next = assertInstanceOf(Admission.Deferred.class, admit(f, "c", "acme", 1).getFirst());
        assertEquals(Duration.ofSeconds(40), next.delay(), "c-0 queues behind a-1's slot, not behind b-0 twice");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void tenantDeferralGivesBackTheHandlerLease(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        var limits = new ConcurrencyAndRate(2, 0);
        GroupAdmission admission = f.admitGroup(group(CRM, SYNC, limits, List.of(
                new Candidate("x", "acme", 1), new Candidate("y", "acme", 1))));
        assertEquals(List.of("x"), admittedIds(admission.decisions()));
        assertEquals(DeferReason.TENANT_LIMIT, ((Admission.Deferred) admission.decisions().get(1)).reason());
        assertEquals(1, admission.leaseTokens().size(), "one call to make, one lease kept");

        // The give-back rides on the next round trip; then y's lease is free for another tenant.
        f.guard.report(List.of());
        GroupAdmission other = f.admitGroup(group(CRM, SYNC, limits, List.of(new Candidate("z", "globex", 1))));
        assertEquals(List.of("z"), admittedIds(other.decisions()));
        assertEquals(1, other.leaseTokens().size());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void tenantDeferralGivesBackTheHandlerRateEntry(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        var limits = new ConcurrencyAndRate(0, 2);
        List<Admission> decisions = f.admitOne(group(CRM, SYNC, limits, List.of(
                new Candidate("x", "acme", 1), new Candidate("y", "acme", 1))));
        assertEquals(List.of("x"), admittedIds(decisions));

        f.guard.report(List.of());
        assertEquals(List.of("z"), admittedIds(f.admitOne(group(CRM, SYNC, limits, List.of(
                new Candidate("z", "globex", 1), new Candidate("w", "globex", 1))))), "y's rate entry came back, x's stays");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aDispatchLargerThanLuaCanUnpackGetsItsSlots(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)));
        List<String> ids = java.util.stream.IntStream.range(0, 20_000).mapToObj(i -> "d-" + i).toList();
        Map<String, TenantSlot> slots = f.guard.reserveTenantSlots(GuardFixture.named("bulk", Trigger.MANUAL, ids));

        assertEquals(20_000, slots.size());
        assertEquals(1000, slots.values().stream().map(TenantSlot::delay).filter(Duration::isZero).count(), "room now for one minute's worth");
        assertEquals(Duration.ofSeconds(60), slots.get("d-1000").delay());
        assertEquals(f.clock.millis() + 60_000, slots.get("d-1000").atMs(), "the slot's own time, which the item carries");
        assertEquals(Duration.ofSeconds(60 * 19), slots.get("d-19999").delay());
        assertTrue(ids.subList(0, 1000).stream().allMatch(id -> slots.get(id).delay().isZero()), "in order");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWebhookOnTheSlotItsProducerReservedIsAdmittedWithoutAskingTheWindowAgain(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        TenantSlot slot = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("r"))).get("r");
        assertTrue(slot.reserved());
        // The window is full (limit 1, r's slot): asking it again for r would admit r on its slot all the same.
        f.redis.set(f.keys.tenantWindow("acme"), "not a sorted set"); // proves the window is not asked: asking it fails the script

        GroupAdmission admission = f.guard.admit(List.of(group("crm-x", "sync", ConcurrencyAndRate.UNLIMITED,
                List.of(new Candidate("r", "acme", Trigger.WEBHOOK.priority(), slot.atMs()))))).getFirst();

        assertEquals(null, admission.failOpen(), "no tenant script ran");
        assertEquals(1, count(admission.decisions(), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void anItemOnItsSlotThatWaitsForALeaseKeepsTheSlotAndIsAdmittedOnItOnce(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        var oneCall = new ConcurrencyAndRate(1, 0);
        TenantSlot slot = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("r"))).get("r");
        GroupAdmission holder = f.admitGroup(group("crm-x", "sync", oneCall, items("h", "globex", Trigger.WEBHOOK, 1)));
        List<Candidate> r = List.of(new Candidate("r", "acme", Trigger.MANUAL.priority(), slot.atMs()));

        var waiting = assertInstanceOf(Admission.Deferred.class, f.admitOne(group("crm-x", "sync", oneCall, r)).getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason());
        var other = assertInstanceOf(Admission.Deferred.class,
                f.admitOne(group("erp-y", "push", ConcurrencyAndRate.UNLIMITED, items("x", "acme", Trigger.MANUAL, 1))).getFirst());
        assertEquals(DeferReason.TENANT_LIMIT, other.reason(), "r's slot was not given back: acme's one place this minute is still r's");

        f.guard.report(List.of(GuardFixture.released(holder)));
        assertInstanceOf(Admission.Admitted.class, f.admitOne(group("crm-x", "sync", oneCall, r)).getFirst(), "admitted on its slot");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aSlotOldEnoughToHaveLeftTheWindowIsAskedForAgain(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        TenantSlot slot = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("r"))).get("r");
        f.clock.advance(Guard.TENANT_WINDOW.minus(TenantWindow.SLOT_MARGIN));
        f.redis.set(f.keys.tenantWindow("acme"), "not a sorted set"); // asking the window fails the script: the proof it was asked

        GroupAdmission admission = f.guard.admit(List.of(group("crm-x", "sync", ConcurrencyAndRate.UNLIMITED,
                List.of(new Candidate("r", "acme", Trigger.MANUAL.priority(), slot.atMs()))))).getFirst();

        assertEquals(FailOpen.SCRIPT_FAILED, admission.failOpen(), "the slot may have left the window: the window decides");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void handlerDeferralGivesBackTheTenantSlot(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(4, Duration.ofSeconds(5)));
        var oneCall = new ConcurrencyAndRate(1, 0);
        assertEquals(List.of("a-0"), admittedIds(f.admitOne(group(CRM, SYNC, oneCall, items("a", "acme", Trigger.WEBHOOK, 1)))));
        List<Admission> waiting = f.admitOne(group(CRM, SYNC, oneCall, items("b", "acme", Trigger.WEBHOOK, 3)));
        assertTrue(waiting.stream().allMatch(d -> d instanceof Admission.Deferred deferred && deferred.reason() == DeferReason.HANDLER_CONCURRENCY));

        f.guard.report(List.of());
        List<Admission> other = f.admitOne(group(CRM, "other", ConcurrencyAndRate.UNLIMITED, items("c", "acme", Trigger.WEBHOOK, 3)));
        assertEquals(3, count(other, Admission.Admitted.class), "b-0..b-2 never ran, so their slots came back");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void pausedItemGivesBackItsReservedSlot(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        admit(f, "a", "acme", 1);
        f.guard.setPaused(CRM, SYNC, true);
        assertInstanceOf(Admission.Paused.class, admit(f, "b", "acme", 1).getFirst());
        f.guard.report(List.of());
        f.guard.setPaused(CRM, SYNC, false);

        var next = assertInstanceOf(Admission.Deferred.class, admit(f, "c", "acme", 1).getFirst());
        assertEquals(Duration.ofSeconds(60), next.delay(), "c-0 takes the slot b-0 gave back, not the one after it");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void longerOfTwoDeferralsWins(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        for (int i = 0; i < 5; i++) {
            f.guard.report(List.of(GuardFixture.tally(CRM, SYNC, 0, 1, List.of())));
        }
        admit(f, "fill", "acme", 1);   // breaker open: refunded, but the window saw it at admission
        f.guard.report(List.of());
        admit(f, "other", "globex", 1);
        f.clock.advance(Duration.ofSeconds(25));
        List<Admission> decisions = f.guard.admit(List.of(group("erp-y", SYNC, ConcurrencyAndRate.UNLIMITED, items("t", "acme", Trigger.WEBHOOK, 2))))
                .getFirst().decisions();
        assertInstanceOf(Admission.Admitted.class, decisions.get(0));
        var tenant = assertInstanceOf(Admission.Deferred.class, decisions.get(1));
        assertEquals(DeferReason.TENANT_LIMIT, tenant.reason());

        var breaker = assertInstanceOf(Admission.Deferred.class, admit(f, "open", "zeta", 1).getFirst());
        assertEquals(DeferReason.BREAKER_OPEN, breaker.reason());
        assertEquals(Duration.ofSeconds(5), breaker.delay());
        assertTrue(tenant.delay().compareTo(breaker.delay()) > 0);
        var both = assertInstanceOf(Admission.Deferred.class, admit(f, "both", "acme", 1).getFirst());
        assertEquals(DeferReason.TENANT_LIMIT, both.reason(), "tenant slot is 60 s away, breaker half-opens in 5 s");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aManualItemOnItsSlotAsksTheWindowSinceAWebhookMayHaveTakenIt(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(5)));
        TenantSlot slot = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("r"))).get("r");
        f.redis.set(f.keys.tenantWindow("acme"), "not a sorted set"); // asking the window fails the script: the proof it was asked

        GroupAdmission admission = f.guard.admit(List.of(group("crm-x", "sync", ConcurrencyAndRate.UNLIMITED,
                List.of(new Candidate("r", "acme", Trigger.MANUAL.priority(), slot.atMs()))))).getFirst();

        assertEquals(FailOpen.SCRIPT_FAILED, admission.failOpen());
    }

    /**
     * A tenant's webhooks behind its own 50-item manual backlog (limit 10/min): each takes the next
     * free slot, ahead of the backlog, in arrival order; each manual item it displaces goes behind
     * the backlog and learns so once, at its old slot; no minute ever holds more than 10 slots.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWebhookPassesItsTenantsOwnManualBacklogAndTheItemItDisplacesComesBackOnceMore(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(10, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        List<String> manual = java.util.stream.IntStream.range(0, 60).mapToObj(i -> "m-" + i).toList();
        Map<String, Long> slotOf = new HashMap<>();
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, manual)).forEach((id, slot) -> slotOf.put(id, slot.atMs()));
        assertEquals(start + 300_000, slotOf.get("m-59"), "the backlog's tail, five minutes out");

        f.clock.advance(Duration.ofSeconds(1));
        Map<String, TenantSlot> webhooks = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-0", "w-1")));
        assertEquals(start + 60_000, webhooks.get("w-0").atMs(), "the next free slot: where the window has room, not behind the backlog");
        assertEquals(start + 60_000, webhooks.get("w-1").atMs());
        webhooks.forEach((id, slot) -> slotOf.put(id, slot.atMs()));

        f.clock.advance(Duration.ofSeconds(59));
        List<Candidate> due = new ArrayList<>();
        webhooks.forEach((id, slot) -> due.add(new Candidate(id, "acme", Trigger.WEBHOOK.priority(), slot.atMs())));
        for (int i = 10; i < 20; i++) {
            due.add(new Candidate("m-" + i, "acme", Trigger.MANUAL.priority(), slotOf.get("m-" + i)));
        }
        List<Admission> decisions = f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, due));
        assertEquals(10, count(decisions, Admission.Admitted.class), "the minute's 10 slots: 2 webhooks and 8 manual items");
        assertTrue(admittedIds(decisions).containsAll(List.of("w-0", "w-1")));
        List<Admission.Deferred> pushedBack = decisions.stream().filter(Admission.Deferred.class::isInstance)
                .map(Admission.Deferred.class::cast).toList();
        assertEquals(List.of("m-10", "m-11"), pushedBack.stream().map(Admission.Deferred::itemId).toList(), "the first two in line, FIFO");
        for (Admission.Deferred deferred : pushedBack) {
            assertEquals(DeferReason.TENANT_LIMIT, deferred.reason());
            slotOf.put(deferred.itemId(), f.clock.millis() + deferred.delay().toMillis());
        }
        assertEquals(start + 360_000, slotOf.get("m-10"), "behind the backlog, as if it came when the webhook did");
        assertEquals(start + 360_000, slotOf.get("m-11"));

        f.clock.advance(Duration.ofMinutes(5));
        List<Admission> back = f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, List.of(
                new Candidate("m-10", "acme", Trigger.MANUAL.priority(), slotOf.get("m-10")),
                new Candidate("m-11", "acme", Trigger.MANUAL.priority(), slotOf.get("m-11")))));
        assertEquals(2, count(back, Admission.Admitted.class), "admitted on the new slot: pushed back once, not in a loop");

        List<Long> times = slotOf.values().stream().sorted().toList();
        for (int i = 0; i + 10 < times.size(); i++) {
            assertTrue(times.get(i + 10) - times.get(i) >= 60_000, "11 slots within a minute from " + (times.get(i) - start));
        }
    }

    /**
     * The urgent share: a tenant with webhooks lately keeps a quarter of each window from its
     * backlog, so its webhooks right after the backlog's first burst are admitted at once, not at
     * the end of that minute; past the share they take the backlog's next slots.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantWithWebhooksKeepsAShareOfEachWindowFromItsBacklog(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(8, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        Map<String, Long> slotOf = new HashMap<>();
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-0"))).forEach((id, slot) -> slotOf.put(id, slot.atMs()));
        List<String> manual = java.util.stream.IntStream.range(0, 30).mapToObj(i -> "m-" + i).toList();
        Map<String, TenantSlot> backlog = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, manual));
        backlog.forEach((id, slot) -> slotOf.put(id, slot.atMs()));
        assertEquals(5, backlog.values().stream().filter(slot -> slot.delay().isZero()).count(), "6 of 8 now, the webhook's included");

        f.clock.advance(Duration.ofSeconds(3));
        Map<String, TenantSlot> webhooks = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-1", "w-2", "w-3")));
        webhooks.forEach((id, slot) -> slotOf.put(id, slot.atMs()));
        assertTrue(webhooks.get("w-1").delay().isZero() && webhooks.get("w-2").delay().isZero(), "the share: room now, before the minute ends");
        assertEquals(start + 60_000, webhooks.get("w-3").atMs(), "past the share: the backlog's next slot");

        f.clock.advance(Duration.ofSeconds(57));
        List<Candidate> due = manual.stream().filter(id -> slotOf.get(id) == start + 60_000)
                .map(id -> new Candidate(id, "acme", Trigger.MANUAL.priority(), slotOf.get(id))).toList();
        List<Admission> back = f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, due));
        List<Admission.Deferred> displaced = back.stream().filter(Admission.Deferred.class::isInstance).map(Admission.Deferred.class::cast).toList();
        assertEquals(1, displaced.size(), "the one w-3 displaced learns so at its old slot");
        slotOf.put(displaced.getFirst().itemId(), f.clock.millis() + displaced.getFirst().delay().toMillis());

        List<Long> times = slotOf.values().stream().sorted().toList();
        for (int i = 0; i + 8 < times.size(); i++) {
            assertTrue(times.get(i + 8) - times.get(i) >= 60_000, "9 slots within a minute from " + (times.get(i) - start) + ": " + times.stream().map(t -> t - start).toList());
        }
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aManualItemPassesAScheduleBacklogButNotAWebhook(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(2, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-0", "w-1", "w-2")));
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.SCHEDULE, List.of("s-0", "s-1", "s-2")));

        TenantSlot manual = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("m"))).get("m");
        assertEquals(start + 120_000, manual.atMs(), "s-0's slot (the schedule items keep a share of each minute for webhooks: one of 2)");
        TenantSlot webhook = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-3"))).get("w-3");
        assertEquals(start + 120_000, webhook.atMs(), "m's slot, the earliest of any lower priority");
        TenantSlot schedule = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.SCHEDULE, List.of("s-3"))).get("s-3");
        assertEquals(start + 420_000, schedule.atMs(), "the lowest priority passes no one: behind s-0 and m, pushed back to 300 s and 360 s");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aDueSlotIsNeverTaken(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("m-0", "m-1")));
        f.clock.advance(Duration.ofSeconds(60));

        TenantSlot webhook = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w"))).get("w");
        assertEquals(start + 120_000, webhook.atMs(), "m-1's slot is due now: its item may be admitted on it, so the webhook waits for the next");
        assertInstanceOf(Admission.Admitted.class, f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED,
                List.of(new Candidate("m-1", "acme", Trigger.MANUAL.priority(), start + 60_000)))).getFirst());
    }

    private static List<Admission> admit(GuardFixture f, String prefix, String tenant, int count) {
        return f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items(prefix, tenant, Trigger.SCHEDULE, count)));
    }
}
