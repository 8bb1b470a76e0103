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
        assertEquals(5, count(f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("a", "acme", Trigger.WEBHOOK, 5))),
                Admission.Admitted.class));

        f.clock.advance(Duration.ofMillis(59_999));
        var full = assertInstanceOf(Admission.Deferred.class, admit(f, "b", "acme", 1).getFirst());
        assertEquals(DeferReason.TENANT_LIMIT, full.reason());
        assertEquals(Duration.ofSeconds(5), full.delay(), "room comes in 1 ms, but no deferral is shorter than shortestDeferral");
        assertEquals(3, count(admit(f, "other", "globex", 5), Admission.Admitted.class),
                "other tenants are not held back; a backlog takes three quarters of a window at once, the rest comes paced");

        f.clock.advance(Duration.ofMillis(1));
        assertEquals(2, count(admit(f, "c", "acme", 5), Admission.Admitted.class),
                "b-0 holds a reserved slot 5 s ahead; of the four places left, a backlog takes two now (three of five, b-0's included)");
    }

    /**
     * 20,000 items of one tenant: three quarters of the first window at once, its last quarter paced
     * through that window, then one slot every 60 ms (1,000 a minute, evenly); no window holds more
     * than the limit, no two slots of the backlog lie more than a few hundred ms apart (a webhook
     * always finds one near to take), and each item is admitted on its slot when it comes back.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void deferralsAreComputedAndPacedOverFutureWindows(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)));
        long start = f.clock.millis();
        // 20,000 items of one tenant arrive in batches of 10 within one second.
        Map<String, Long> dueAt = new HashMap<>();
        List<Long> slots = new ArrayList<>();
        for (int batch = 0; batch < 2000; batch++) {
            for (Admission decision : admit(f, "b" + batch, "bulk", 10)) {
                switch (decision) {
                    case Admission.Admitted a -> slots.add(f.clock.millis());
                    case Admission.Deferred d -> {
                        assertEquals(DeferReason.TENANT_LIMIT, d.reason());
                        dueAt.put(d.itemId(), f.clock.millis() + d.delay().toMillis());
                        slots.add(f.clock.millis() + d.delay().toMillis());
                    }
                    case Admission.Paused p -> throw new AssertionError("not paused: " + p);
                }
            }
            if (batch % 4 == 0) {
                f.clock.advance(Duration.ofMillis(2));
            }
        }
        assertEquals(19_250, dueAt.size(), "750 at once");
        slots.sort(Long::compare);
        for (int i = 0; i + 1000 < slots.size(); i++) {
            assertTrue(slots.get(i + 1000) - slots.get(i) >= 60_000, "1,001 slots within a minute from " + (slots.get(i) - start));
        }
        List<Long> future = slots.subList(750, slots.size());
        for (int i = 0; i + 1 < future.size(); i++) {
            assertTrue(future.get(i + 1) - future.get(i) <= 230, "a gap of " + (future.get(i + 1) - future.get(i)) + " ms at "
                    + (future.get(i) - start));
        }
        Map<Long, Integer> perMinute = new HashMap<>();
        slots.forEach(t -> perMinute.merge((t - start) / 60_000, 1, Integer::sum));
        for (long minute = 1; minute < 19; minute++) {
            assertTrue(Math.abs(perMinute.get(minute) - 1000) <= 2, "minute " + minute + ": " + perMinute.get(minute));
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
        assertEquals(19_250, readmitted);
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
        assertEquals(Duration.ofSeconds(70), next.delay(), "c-0 queues behind b-0's slot once, paced (2 a minute: 30 s apart)");
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
        long start = f.clock.millis();
        List<String> ids = java.util.stream.IntStream.range(0, 20_000).mapToObj(i -> "d-" + i).toList();
        Map<String, TenantSlot> slots = f.guard.reserveTenantSlots(GuardFixture.named("bulk", Trigger.MANUAL, ids));

        assertEquals(20_000, slots.size());
        assertEquals(750, slots.values().stream().map(TenantSlot::delay).filter(Duration::isZero).count(), "three quarters of a minute now");
        assertTrue(ids.subList(0, 750).stream().allMatch(id -> slots.get(id).delay().isZero()), "in order");
        assertEquals(Duration.ofSeconds(5), slots.get("d-750").delay(), "the window's last quarter, paced from the shortest deferral");
        assertEquals(start + 5_000, slots.get("d-750").atMs(), "the slot's own time, which the item carries");
        assertEquals(start + 60_060, slots.get("d-1000").atMs(), 1, "then one every 60 ms");
        assertEquals(start + 60_000 + 19_000 * 60, slots.get("d-19999").atMs(), 1);
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
    /**
     * A tenant's webhooks behind its own 60-item manual backlog (limit 10/min): the window has room
     * now for the first; the second makes room now by taking the backlog's last slot of this minute
     * (every window before it had room); the third finds every window holding now full and takes the
     * backlog's next slot. Each manual item displaced goes behind the backlog and learns so once, at
     * its old slot; no minute ever holds more than 10 slots.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWebhookPassesItsTenantsOwnManualBacklogAndTheItemItDisplacesComesBackOnceMore(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(10, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        List<String> manual = java.util.stream.IntStream.range(0, 60).mapToObj(i -> "m-" + i).toList();
        Map<String, Long> slotOf = new HashMap<>();
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, manual)).forEach((id, slot) -> slotOf.put(id, slot.atMs()));
        assertEquals(start, slotOf.get("m-6"), "seven of ten now");
        assertEquals(List.of(start + 1_000, start + 30_500, start + 60_000), List.of(slotOf.get("m-7"), slotOf.get("m-8"), slotOf.get("m-9")),
                "the window's last three paced through it");
        assertEquals(start + 360_000, slotOf.get("m-59"), "then one every 6 s: the backlog's tail, six minutes out");

        f.clock.advance(Duration.ofSeconds(1));
        Map<String, TenantSlot> webhooks = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-0", "w-1", "w-2")));
        assertEquals(Duration.ZERO, webhooks.get("w-0").delay(), "every window holding now has room");
        assertEquals(Duration.ZERO, webhooks.get("w-1").delay(), "room made by taking m-8's slot");
        assertEquals(start + 60_000, webhooks.get("w-2").atMs(), "m-9's slot: m-7's is due, and is never taken");
        webhooks.forEach((id, slot) -> slotOf.put(id, slot.atMs()));

        // m-8 and m-9 come back at their old slots and learn their new ones, behind the backlog.
        for (String displaced : List.of("m-8", "m-9")) {
            f.clock.advance(Duration.ofMillis(slotOf.get(displaced) - f.clock.millis()));
            var deferred = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED,
                    List.of(new Candidate(displaced, "acme", Trigger.MANUAL.priority(), slotOf.get(displaced))))).getFirst(), displaced);
            assertEquals(DeferReason.TENANT_LIMIT, deferred.reason());
            slotOf.put(displaced, f.clock.millis() + deferred.delay().toMillis());
        }
        assertEquals(start + 366_000, slotOf.get("m-8"), "behind the backlog, as if it came when the webhook did");
        assertEquals(start + 372_000, slotOf.get("m-9"));

        f.clock.advance(Duration.ofMillis(slotOf.get("m-9") - f.clock.millis()));
        List<Admission> back = f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, List.of(
                new Candidate("m-8", "acme", Trigger.MANUAL.priority(), slotOf.get("m-8")),
                new Candidate("m-9", "acme", Trigger.MANUAL.priority(), slotOf.get("m-9")))));
        assertEquals(2, count(back, Admission.Admitted.class), "admitted on the new slot: pushed back once, not in a loop");
        assertNoWindowOverLimit(slotOf.values(), 10, start);
    }

    /**
     * The first webhooks after a quiet spell (no webhook before, ever): a backlog started 3 s
     * earlier took three quarters of its first window at once and paced the rest through it, so ten
     * webhooks sent one after another are each admitted at once (each but the first taking one of
     * the paced slots, which the window still had room before), and no window exceeds the limit.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantsFirstWebhooksAfterAQuietSpellAreAdmittedAtOnce(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(100, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        f.guard.reserveTenantSlots(items("m", "acme", Trigger.MANUAL, 600));

        f.clock.advance(Duration.ofSeconds(3));
        for (int i = 0; i < 10; i++) {
            TenantSlot webhook = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-" + i))).get("w-" + i);
            assertEquals(Duration.ZERO, webhook.delay(), "webhook " + i);
            f.clock.advance(Duration.ofMillis(300));
        }
        assertNoWindowOverLimit(windowSlots(f, "acme"), 100, start);
    }

    /** With no webhook, a backlog drains at the tenant's limit: the quarter kept from its first burst comes paced, not lost. */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aBacklogWithoutWebhooksDrainsAtTheLimit(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(40, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        Map<String, TenantSlot> slots = f.guard.reserveTenantSlots(items("m", "acme", Trigger.MANUAL, 200));
        Map<Long, Long> perMinute = new java.util.TreeMap<>();
        // Minutes (start + 60 k, start + 60 (k + 1)], the first holding the slots given at once.
        slots.values().forEach(slot -> perMinute.merge(Math.max(0, slot.atMs() - start - 1) / 60_000, 1L, Long::sum));
        assertEquals(Map.of(0L, 40L, 1L, 40L, 2L, 40L, 3L, 40L, 4L, 40L), perMinute, "40 in each minute, the first included");
    }

    /**
     * The backlog horizon: slots are reserved only up to it; a lower-priority item whose slot would
     * lie further ahead is held (nothing reserved); a webhook never is.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void slotsAreReservedUpToTheHorizonAndTheRestIsHeld(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(60, Duration.ofSeconds(1)));
        long start = f.clock.millis();
        Map<String, TenantSlot> slots = f.guard.reserveTenantSlots(items("m", "acme", Trigger.MANUAL, 1000), Duration.ofMinutes(2));

        long held = slots.values().stream().filter(TenantSlot::held).count();
        assertEquals(1000 - 120, held, "45 now, 15 paced through the first minute, then one a second up to two minutes");
        assertTrue(slots.values().stream().filter(TenantSlot::reserved).allMatch(slot -> slot.atMs() <= start + 120_000));
        assertEquals(120, windowSlots(f, "acme").size(), "nothing reserved for the held ones");
        assertTrue(slots.get("m-119").reserved() && slots.get("m-120").held(), "in order");

        TenantSlot webhook = f.guard.reserveTenantSlots(items("w", "acme", Trigger.WEBHOOK, 1), Duration.ofMinutes(2)).get("w-0");
        assertTrue(webhook.reserved() && !webhook.held(), "a webhook is never held");
    }

    /** A cancelled run's future slots go back at once: the tenant's next run takes them, not the ones behind. */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aCancelledRunsFutureSlotsGoBackAtOnce(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(60, Duration.ofSeconds(1)));
        java.util.UUID cancelled = java.util.UUID.randomUUID();
        java.util.UUID next = java.util.UUID.randomUUID();
        f.guard.reserveTenantSlots(ofRun(items("c", "acme", Trigger.MANUAL, 600), cancelled));
        f.clock.advance(Duration.ofMillis(500));

        assertEquals(600 - 45, f.guard.releaseRun("acme", cancelled), "every slot still ahead; the 45 admitted at once stay counted");
        assertEquals(0, f.guard.releaseRun("acme", next), "another run's slots are its own");
        Map<String, TenantSlot> after = f.guard.reserveTenantSlots(ofRun(items("n", "acme", Trigger.MANUAL, 15), next));
        assertTrue(after.values().stream().allMatch(slot -> slot.atMs() <= f.clock.millis() + 60_000),
                "the next run paces through this minute's last quarter, not behind ten minutes of cancelled slots");
        assertNoWindowOverLimit(windowSlots(f, "acme"), 60, f.clock.millis());
    }

    private static List<Candidate> ofRun(List<Candidate> items, java.util.UUID runId) {
        return items.stream().map(c -> new Candidate(c.itemId(), c.tenantId(), c.priority(), 0, Candidate.runTagOf(runId), 1)).toList();
    }

    /** The tenant window's slot times, as Redis holds them. */
    private static List<Long> windowSlots(GuardFixture f, String tenant) {
        return ((List<?>) f.redis.run(List.of(new dev.runner.redis.Redis.Read.Scores(f.keys.tenantWindow(tenant)))).getFirst())
                .stream().map(score -> (long) Math.ceil((Double) score)).toList();
    }

    private static void assertNoWindowOverLimit(java.util.Collection<Long> slotTimes, int limit, long start) {
        List<Long> times = slotTimes.stream().sorted().toList();
        for (int i = 0; i + limit < times.size(); i++) {
            assertTrue(times.get(i + limit) - times.get(i) >= 60_000, (limit + 1) + " slots within a minute from "
                    + (times.get(i) - start) + ": " + times.stream().map(t -> t - start).toList());
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
        assertEquals(start + 90_000, manual.atMs(), "s-0's slot, the earliest of a lower priority");
        TenantSlot webhook = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.WEBHOOK, List.of("w-3"))).get("w-3");
        assertEquals(start + 90_000, webhook.atMs(), "m's slot: the earliest of any lower priority");
        TenantSlot schedule = f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.SCHEDULE, List.of("s-3"))).get("s-3");
        assertEquals(start + 240_000, schedule.atMs(), "the lowest priority passes no one: behind s-0 and s-1, pushed back to 180 s and 210 s");
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
