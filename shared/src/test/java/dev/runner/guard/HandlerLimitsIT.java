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
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handler concurrency leases, rate window and pause flag of admitHandler-5.lua, on real Redis (single and cluster). */
class HandlerLimitsIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void rateLimitHoldsAtTheWindowEdges(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new HandlerLimits(0, 4);
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
        var limits = new HandlerLimits(0, 3);
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
        var limits = new HandlerLimits(12_000, 12_000);
        GroupAdmission admission = f.guard.admit(List.of(group(CRM, SYNC, limits, items("big", "acme", Trigger.WEBHOOK, 10_000)))).getFirst();
        assertEquals(null, admission.failOpen());
        assertEquals(10_000, count(admission.decisions(), Admission.Admitted.class));
        List<Admission> over = f.admitOne(group(CRM, SYNC, limits, items("more", "acme", Trigger.WEBHOOK, 2_001)));
        assertEquals(2_000, count(over, Admission.Admitted.class), "10,000 leases and rate entries were written");

        f.guard.report(List.of(GuardFixture.calls(CRM, SYNC, true, admittedIds(admission.decisions()))));
        assertEquals(1, count(f.admitOne(group(CRM, SYNC, new HandlerLimits(12_000, 0), items("after", "acme", Trigger.WEBHOOK, 1))),
                Admission.Admitted.class), "the report released 10,000 leases");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void rateDeferralsAreSpreadOverTheWindow(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new HandlerLimits(0, 3);
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
        var limits = new HandlerLimits(7, 0);
        int workers = 12;
        List<Redis> connections = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            connections.add(RedisTargets.another(target.redis()));
        }
        var start = new CyclicBarrier(workers);
        try (ExecutorService pool = Executors.newFixedThreadPool(workers)) {
            List<Future<List<String>>> admitted = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Guard worker = f.anotherWorker(connections.get(w));
                String prefix = "w" + w;
                admitted.add(pool.submit(() -> {
                    start.await();
                    List<String> mine = new ArrayList<>();
                    for (int round = 0; round < 5; round++) {
                        mine.addAll(admittedIds(worker.admit(List.of(group(CRM, SYNC, limits,
                                items(prefix + "r" + round, "t-" + prefix, Trigger.WEBHOOK, 3)))).getFirst().decisions()));
                    }
                    return mine;
                }));
            }
            int total = 0;
            for (Future<List<String>> future : admitted) {
                total += future.get().size();
            }
            assertEquals(7, total, "leases granted across all workers");
        } finally {
            connections.forEach(Redis::close);
        }
        assertEquals(0, count(f.admitOne(group(CRM, SYNC, limits, items("more", "acme", Trigger.WEBHOOK, 3))), Admission.Admitted.class));

        // Workers that die never report: their leases expire.
        f.clock.advance(GuardFixture.LEASE_TTL);
        assertEquals(7, count(f.admitOne(group(CRM, SYNC, limits, items("after", "acme", Trigger.WEBHOOK, 9))), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void reportReleasesLeases(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new HandlerLimits(2, 0);
        List<Admission> first = f.admitOne(group(CRM, SYNC, limits, items("a", "acme", Trigger.WEBHOOK, 3)));
        assertEquals(List.of("a-0", "a-1"), admittedIds(first));
        var waiting = assertInstanceOf(Admission.Deferred.class, first.get(2));
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason());
        assertEquals(GuardFixture.TENANT.shortestDeferral(), waiting.delay());

        f.guard.report(List.of(GuardFixture.tally(CRM, SYNC, 1, 0, List.of("a-0"))));
        assertEquals(List.of("b-0"), admittedIds(f.admitOne(group(CRM, SYNC, limits, items("b", "acme", Trigger.WEBHOOK, 2)))));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void scheduleBacklogLeavesAShareOfSlotsForWebhooks(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new HandlerLimits(8, 0);
        List<Admission> backlog = f.admitOne(group(CRM, SYNC, limits, items("sched", "acme", Trigger.SCHEDULE, 10)));
        assertEquals(6, count(backlog, Admission.Admitted.class), "8 - ceil(8/4) slots for schedule items");

        List<Admission> urgent = f.admitOne(group(CRM, SYNC, limits, items("hook", "acme", Trigger.WEBHOOK, 3)));
        assertEquals(List.of("hook-0", "hook-1"), admittedIds(urgent));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void scheduleBacklogLeavesAShareOfTheRateForWebhooks(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new HandlerLimits(0, 4);
        assertEquals(3, count(f.admitOne(group(CRM, SYNC, limits, items("sched", "acme", Trigger.SCHEDULE, 4))), Admission.Admitted.class));
        assertEquals(0, count(f.admitOne(group(CRM, SYNC, limits, items("manual", "acme", Trigger.MANUAL, 2))), Admission.Admitted.class),
                "a manual backlog may not take the webhooks' share either");
        assertEquals(1, count(f.admitOne(group(CRM, SYNC, limits, items("hook", "acme", Trigger.WEBHOOK, 2))), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void pausedHandlerParksItsItemsOnly(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        f.guard.setPaused(CRM, SYNC, true);
        List<GroupAdmission> admissions = f.guard.admit(List.of(
                group(CRM, SYNC, new HandlerLimits(1, 1), items("p", "acme", Trigger.WEBHOOK, 3)),
                group(CRM, "other", HandlerLimits.UNLIMITED, items("o", "acme", Trigger.WEBHOOK, 2))));
        assertTrue(admissions.get(0).decisions().stream().allMatch(Admission.Paused.class::isInstance));
        assertEquals(2, count(admissions.get(1).decisions(), Admission.Admitted.class));

        f.guard.setPaused(CRM, SYNC, false);
        assertEquals(List.of("r-0"), admittedIds(f.admitOne(group(CRM, SYNC, new HandlerLimits(1, 1), items("r", "acme", Trigger.WEBHOOK, 2)))),
                "paused items took no lease and no rate entry");
    }
}
