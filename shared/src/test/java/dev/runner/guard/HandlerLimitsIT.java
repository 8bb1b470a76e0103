package dev.runner.guard;

import dev.runner.redis.Redis;
import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.runner.guard.GuardFixture.admittedIds;
import static dev.runner.guard.GuardFixture.count;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handler concurrency leases (per call), rate window, the work-conserving urgent share and the pause flag of admitHandler-9.lua, on real Redis (single and cluster). */
class HandlerLimitsIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void rateLimitHoldsAtTheWindowEdges(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(0, 4);
        assertEquals(4, count(f.admitOne(group(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 4))), Admission.Admitted.class));

        f.clock.advance(Duration.ofMillis(59_999));
        var early = assertInstanceOf(Admission.Deferred.class,
                f.admitOne(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 1))).getFirst());
        assertEquals(DeferReason.HANDLER_RATE, early.reason());
        assertEquals(Duration.ofSeconds(1), early.delay(), "room comes in 1 ms, but no deferral is shorter than a second");

        f.clock.advance(Duration.ofMillis(1));
        assertEquals(4, count(f.admitOne(group(CRM, SYNC, limits, items("c", "acme", Trigger.WEBHOOK, 4))), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void everyAdmissionOfOneItemCountsAgainstTheRate(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(0, 3);
        for (int attempt = 1; attempt <= 3; attempt++) {
            // The same item, retried within the minute: each attempt is a call to the handler.
            assertEquals(List.of("x"), admittedIds(f.admitOne(group(CRM, SYNC, limits, List.of(new Candidate("x", "acme", 1))))));
            f.guard.report(List.of(GuardFixture.calls(CRM, SYNC, false, List.of("x"))));
            f.clock.advance(Duration.ofSeconds(5));
        }
        var fourth = assertInstanceOf(Admission.Deferred.class,
                f.admitOne(group(CRM, SYNC, limits, List.of(new Candidate("x", "acme", 1)))).getFirst());
        assertEquals(DeferReason.HANDLER_RATE, fourth.reason());
        assertEquals(Duration.ofSeconds(45), fourth.delay(), "the first attempt leaves the window 60 s after it, at 15 s from now");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aGroupLargerThanLuaCanUnpackIsDecidedByRedis(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new dev.runner.config.RunnerConfig.TenantLimit(100_000, Duration.ofSeconds(5)));
        var limits = new ConcurrencyAndRate(12_000, 12_000);
        GroupAdmission admission = f.guard.admit(List.of(group(CRM, SYNC, limits, items("big", "acme", Trigger.WEBHOOK, 10_000)))).getFirst();
        assertEquals(null, admission.failOpen());
        assertEquals(10_000, count(admission.decisions(), Admission.Admitted.class));
        List<Admission> over = f.admitOne(group(CRM, SYNC, limits, items("more", "acme", Trigger.WEBHOOK, 2_001)));
        assertEquals(2_000, count(over, Admission.Admitted.class), "10,000 leases and rate entries were written");

        assertEquals(10_000, admission.leaseTokens().size(), "one lease per call of one item");
        f.guard.report(List.of(GuardFixture.released(admission)));
        GroupAdmission after = f.admitGroup(group(CRM, SYNC, new ConcurrencyAndRate(12_000, 0), items("after", "acme", Trigger.WEBHOOK, 1)));
        assertEquals(1, after.leaseTokens().size(), "the report released 10,000 leases");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void rateDeferralsAreSpreadOverTheWindow(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(0, 3);
        for (int second = 0; second < 3; second++) {
            f.admitOne(group(CRM, SYNC, limits, items("s" + second, "acme", Trigger.WEBHOOK, 1)));
            f.clock.advance(Duration.ofSeconds(10));
        }
        // Now = 30 s; entries at 0, 10, 20 s leave the window at 60, 70, 80 s.
        List<Admission> decisions = f.admitOne(group(CRM, SYNC, limits, items("late", "acme", Trigger.WEBHOOK, 3)));
        List<Duration> delays = decisions.stream().map(d -> ((Admission.Deferred) d).delay()).toList();
        assertEquals(List.of(Duration.ofSeconds(30), Duration.ofSeconds(40), Duration.ofSeconds(50)), delays);
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void leasesNeverExceedTheLimitUnderConcurrentAcquirers(RedisTargets.Target target) throws Exception {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(7, 0);
        int workers = 12;
        List<Redis> connections = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            connections.add(RedisTargets.another(target.redis()));
        }
        var start = new CyclicBarrier(workers);
        try (ExecutorService pool = Executors.newFixedThreadPool(workers)) {
            List<Future<Integer>> leases = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Guard worker = f.anotherWorker(connections.get(w));
                String prefix = "w" + w;
                leases.add(pool.submit(() -> {
                    start.await();
                    int mine = 0;
                    for (int round = 0; round < 5; round++) {
                        mine += worker.admit(List.of(group(CRM, SYNC, limits,
                                items(prefix + "r" + round, "t-" + prefix, Trigger.WEBHOOK, 3)))).getFirst().leaseTokens().size();
                    }
                    return mine;
                }));
            }
            int total = 0;
            for (Future<Integer> future : leases) {
                total += future.get();
            }
            assertEquals(7, total, "leases granted across all workers");
        } finally {
            connections.forEach(Redis::close);
        }
        List<Admission> more = f.admitOne(group(CRM, SYNC, limits, items("more", "acme", Trigger.WEBHOOK, 3)));
        assertTrue(more.stream().allMatch(d -> d instanceof Admission.Deferred deferred && deferred.reason() == DeferReason.HANDLER_CONCURRENCY));

        // Workers that die never report: their leases expire.
        f.clock.advance(GuardFixture.LEASE_TTL);
        GroupAdmission after = f.admitGroup(group(CRM, SYNC, limits, items("after", "acme", Trigger.WEBHOOK, 9)));
        assertEquals(9, count(after.decisions(), Admission.Admitted.class), "every item admitted, to run through the lanes");
        assertEquals(7, after.leaseTokens().size(), "seven calls in flight at most");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void itemsBeyondTheFreeLeasesRunThroughLanesInsteadOfWaiting(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(2, 0);
        GroupAdmission first = f.admitGroup(new GroupRequest(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 3), 1,
                Duration.ofMillis(400), Duration.ofSeconds(30)));
        assertEquals(3, count(first.decisions(), Admission.Admitted.class));
        assertEquals(2, first.leaseTokens().size(), "two lanes for three calls");
        assertEquals(2, first.lanes(3));

        var waiting = assertInstanceOf(Admission.Deferred.class,
                f.admitOne(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 1))).getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason());
        assertEquals(Duration.ofMillis(400), waiting.delay(), "lane 2 makes one call of 400 ms, so its lease is expected back first");
        assertEquals(List.of(":1:" + (first.admittedAtMs() + 800), ":2:" + (first.admittedAtMs() + 400)),
                first.leaseTokens().stream().map(token -> token.substring(token.indexOf(':'))).toList(),
                "each lease records its own lane's end: lane 1 makes calls 1 and 3");

        f.guard.report(List.of(GuardFixture.released(first)));
        assertEquals(1, f.admitGroup(group(CRM, SYNC, limits, items("c", "acme", Trigger.WEBHOOK, 1))).leaseTokens().size());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWorkerWaitingForALeaseIsWokenWhenOneIsGivenBack(RedisTargets.Target target) throws Exception {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(1, 0);
        GroupAdmission holder = f.admitGroup(group(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 1)));
        assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 1))).getFirst());
        assertFalse(f.guard.awaitLease(CRM, SYNC, Duration.ofMillis(50)), "no ring while the lease is held");

        try (var executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Boolean> woken = executor.submit(() -> f.guard.awaitLease(CRM, SYNC, Duration.ofSeconds(5)));
            f.guard.report(List.of(GuardFixture.released(holder)));
            assertTrue(woken.get(), "the waiter was woken by the lease's ring, not by the end of its wait");
        }
        assertEquals(1, f.admitGroup(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 1))).leaseTokens().size());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aRingForALeaseSomeoneElseTookDoesNotWakeTheNextWaiter(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(1, 0);
        GroupAdmission holder = f.admitGroup(group(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 1)));
        f.admitOne(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 1))); // b would wait, but never blocks
        f.guard.report(List.of(GuardFixture.released(holder)));                         // a ring nobody is blocked on
        assertEquals(1, f.admitGroup(group(CRM, SYNC, limits, items("c", "acme", Trigger.WEBHOOK, 1))).leaseTokens().size(), "c took it");

        assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, limits, items("d", "acme", Trigger.WEBHOOK, 1))).getFirst());
        assertFalse(f.guard.awaitLease(CRM, SYNC, Duration.ofMillis(50)), "the stale ring was cleared when d found no lease free");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aLeaseGivenBackWhileNobodyWaitsRingsNothing(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission holder = f.admitGroup(group(CRM, SYNC, new ConcurrencyAndRate(1, 0), items("a", "acme", Trigger.WEBHOOK, 1)));
        f.guard.report(List.of(GuardFixture.released(holder)));

        assertFalse(f.guard.awaitLease(CRM, SYNC, Duration.ofMillis(50)), "a ring nobody waits for would wake the next waiter for nothing");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aLeaseHeldPastItsExpectedEndIsAskedForAgainAfterAQuarterCallNotAtOnce(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(1, 0);
        f.admitGroup(new GroupRequest(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 1), 1,
                Duration.ofMillis(400), Duration.ofSeconds(30)));
        f.clock.advance(Duration.ofMillis(500));

        var waiting = assertInstanceOf(Admission.Deferred.class, f.admitGroup(new GroupRequest(CRM, SYNC, limits,
                items("b", "acme", Trigger.WEBHOOK, 1), 1, Duration.ofMillis(400), Duration.ofSeconds(30))).decisions().getFirst());

        assertEquals(Duration.ofMillis(100), waiting.delay(), "the holder is late: ask again after a quarter of a 400 ms call");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aBatchCallTakesOneLeaseWhateverItsItems(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission batch = f.admitGroup(new GroupRequest(CRM, SYNC, new ConcurrencyAndRate(2, 0), items("a", "acme", Trigger.WEBHOOK, 10), 10,
                Duration.ofMillis(100), Duration.ofSeconds(30)));
        assertEquals(10, count(batch.decisions(), Admission.Admitted.class));
        assertEquals(1, batch.leaseTokens().size());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aBacklogUsesTheWholeLimitWhileNoWebhookItemWaitsOrRuns(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(8, 0);
        GroupAdmission backlog = f.admitGroup(group(CRM, SYNC, limits, items("sched", "acme", Trigger.SCHEDULE, 10)));
        assertEquals(8, backlog.leaseTokens().size(), "no webhook around: the share kept for them is not held");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWebhookRunningKeepsItsShareOfSlotsUntilItIsReported(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(8, 0);
        GroupAdmission hook = f.admitGroup(group(CRM, SYNC, limits, items("hook", "acme", Trigger.WEBHOOK, 1)));
        assertEquals(1, hook.leaseTokens().size());

        GroupAdmission backlog = f.admitGroup(group(CRM, SYNC, limits, items("sched", "acme", Trigger.SCHEDULE, 10)));
        assertEquals(5, backlog.leaseTokens().size(), "8 - ceil(8/4) slots for schedule items, one of them taken by the webhook");
        GroupAdmission urgent = f.admitGroup(group(CRM, SYNC, limits, items("hook2", "acme", Trigger.WEBHOOK, 3)));
        assertEquals(2, urgent.leaseTokens().size(), "webhook items may use the share");

        f.guard.report(List.of(GuardFixture.released(hook), GuardFixture.released(urgent)));
        GroupAdmission more = f.admitGroup(group(CRM, SYNC, limits, items("sched2", "acme", Trigger.SCHEDULE, 10)));
        assertEquals(3, more.leaseTokens().size(), "with no webhook left, the backlog fills the whole limit");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWebhookWaitingKeepsItsShareOfTheRate(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(0, 4);
        assertEquals(4, count(f.admitOne(group(CRM, SYNC, limits, items("sched", "acme", Trigger.SCHEDULE, 4))), Admission.Admitted.class),
                "no webhook around: the whole rate");
        var hook = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, limits, items("hook", "acme", Trigger.WEBHOOK, 1))).getFirst());
        assertEquals(DeferReason.HANDLER_RATE, hook.reason());

        f.clock.advance(Duration.ofSeconds(61));
        assertEquals(3, count(f.admitOne(group(CRM, SYNC, limits, items("manual", "acme", Trigger.MANUAL, 4))), Admission.Admitted.class),
                "a webhook item is coming back for its slot: a manual backlog leaves it the share");
        assertEquals(1, count(f.admitOne(group(CRM, SYNC, limits, items("hook", "acme", Trigger.WEBHOOK, 1))), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void pausedHandlerParksItsItemsOnly(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        f.guard.setPaused(CRM, SYNC, true);
        List<GroupAdmission> admissions = f.guard.admit(List.of(
                group(CRM, SYNC, new ConcurrencyAndRate(1, 1), items("p", "acme", Trigger.WEBHOOK, 3)),
                group(CRM, "other", ConcurrencyAndRate.UNLIMITED, items("o", "acme", Trigger.WEBHOOK, 2))));
        assertTrue(admissions.get(0).decisions().stream().allMatch(Admission.Paused.class::isInstance));
        assertEquals(2, count(admissions.get(1).decisions(), Admission.Admitted.class));

        f.guard.setPaused(CRM, SYNC, false);
        assertEquals(List.of("r-0"), admittedIds(f.admitOne(group(CRM, SYNC, new ConcurrencyAndRate(1, 1), items("r", "acme", Trigger.WEBHOOK, 2)))),
                "paused items took no lease and no rate entry");
    }
    /**
     * Fair share across tenants: a tenant whose calls hang (never reported) may take every free lease
     * while no one else wants one (work-conserving); once another tenant is left waiting, the hanging
     * tenant takes none beyond its half, and each lease that comes back goes to the waiting tenant.
     */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantWhoseCallsHangKeepsNoMoreThanItsShareOnceAnotherWaits(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(4, 0);
        List<GroupAdmission> hung = new ArrayList<>();
        for (int call = 0; call < 4; call++) {
            hung.add(f.admitGroup(group(CRM, SYNC, limits, items("hang" + call, "hanging", Trigger.MANUAL, 1))));
        }
        assertEquals(4, hung.stream().filter(a -> a.decisions().getFirst() instanceof Admission.Admitted).count(), "alone: every lease");

        var waiting = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, limits, items("fair", "other", Trigger.MANUAL, 1)))
                .getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason(), "no lease free: the other tenant waits, and says so");

        f.guard.report(List.of(GuardFixture.released(hung.getFirst())));
        var more = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, limits, items("hang-more", "hanging", Trigger.MANUAL, 1)))
                .getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, more.reason(), "three held, share two: the hanging tenant takes no lease back");
        GroupAdmission other = f.admitGroup(group(CRM, SYNC, limits, items("fair-again", "other", Trigger.MANUAL, 2)));
        assertEquals(List.of("other"), other.leaseTokens().stream().map(GroupAdmission::tenantOfLease).toList(),
                "the lease that came back is the waiting tenant's");
        assertEquals(2, count(other.decisions(), Admission.Admitted.class), "its two calls run one after the other on it");
        assertTrue(other.tenantLanes());
    }

    /** Weighted shares: weights 3 and 1 on a handler of 4 calls, both waiting: 3 leases for one, 1 for the other. */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void competingTenantsShareTheLeasesByWeight(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(4, 0);
        GroupAdmission filler = f.admitGroup(group(CRM, SYNC, limits, weighted("fill", "filler", 1, 4)));
        assertEquals(4, filler.leaseTokens().size());
        // Both wait: nothing is free.
        f.admitGroup(group(CRM, SYNC, limits, weighted("h0", "heavy", 3, 1)));
        f.admitGroup(group(CRM, SYNC, limits, weighted("l0", "light", 1, 1)));
        f.guard.report(List.of(GuardFixture.released(filler)));

        GroupAdmission mixed = f.admitGroup(group(CRM, SYNC, limits, java.util.stream.Stream.concat(
                weighted("l", "light", 1, 4).stream(), weighted("h", "heavy", 3, 4).stream()).toList()));
        List<String> leaseTenants = mixed.leaseTokens().stream().map(GroupAdmission::tenantOfLease).sorted().toList();
        assertEquals(List.of("heavy", "heavy", "heavy", "light"), leaseTenants, "4 x 3 / 4 for heavy, 4 x 1 / 4 for light");
        assertTrue(mixed.tenantLanes(), "each lease one tenant's: its calls only run on it");
        assertEquals(8, count(mixed.decisions(), Admission.Admitted.class), "every item runs, in its tenant's lanes");
    }

    private static List<Candidate> weighted(String prefix, String tenant, int weight, int count) {
        return items(prefix, tenant, Trigger.MANUAL, count).stream()
                .map(c -> new Candidate(c.itemId(), c.tenantId(), c.priority(), 0, "", weight)).toList();
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantAloneUsesEveryLease(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(4, 0);
        List<Admission> decisions = new ArrayList<>();
        for (int call = 0; call < 4; call++) {
            decisions.addAll(f.admitOne(group(CRM, SYNC, limits, items("solo" + call, "acme", Trigger.MANUAL, 1))));
        }
        assertEquals(4, count(decisions, Admission.Admitted.class), "no other tenant about: work-conserving");
    }
}
