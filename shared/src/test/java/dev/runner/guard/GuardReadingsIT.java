package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostMeter;
import dev.runner.integration.HandlerRef;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What operators read of the guard's state (breakers, limit use, tenant windows, deferral counts), on real Redis, single and cluster. */
class GuardReadingsIT {

    private static final String CRM = "crm-x";
    private static final HandlerRef SYNC = new HandlerRef(CRM, "sync");

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void handlerUsageCountsLiveLeasesAndTheLastMinutesAdmissions(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var readings = new GuardReadings(target.redis(), f.keys, GuardFixture.BREAKER, f.clock);
        GroupAdmission admission = f.admitGroup(group(CRM, SYNC.handlerKey(), new ConcurrencyAndRate(5, 100), items("a", "acme", Trigger.WEBHOOK, 3)));

        assertEquals(new GuardReadings.HandlerUsage(3, 3), readings.handlers(List.of(SYNC)).orElseThrow().usage().get(SYNC));
        f.clock.advance(Duration.ofSeconds(61));
        assertEquals(new GuardReadings.HandlerUsage(3, 0), readings.handlers(List.of(SYNC)).orElseThrow().usage().get(SYNC),
                "leases live until reported or expired; admissions leave the rate window after a minute");
        f.guard.report(List.of(GuardFixture.released(admission)));
        assertEquals(new GuardReadings.HandlerUsage(0, 0), readings.handlers(List.of(SYNC)).orElseThrow().usage().get(SYNC));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void anOpenBreakerReadsOpenUntilItsHalfOpenTimeThenHalfOpen(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var readings = new GuardReadings(target.redis(), f.keys, GuardFixture.BREAKER, f.clock);
        assertEquals(BreakerState.CLOSED, readings.handlers(List.of(SYNC)).orElseThrow().breakers().get(CRM).state());
        f.guard.report(List.of(new GroupReport(CRM, SYNC.handlerKey(), Collections.nCopies(5, new GroupReport.Call(List.of(), false)), List.of(), List.of())));

        BreakerSnapshot open = readings.handlers(List.of(SYNC)).orElseThrow().breakers().get(CRM);
        assertEquals(BreakerState.OPEN, open.state());
        assertEquals(open.openedAtMs() + 30_000, open.halfOpenAtMs(), "open until openedAt + openFor");
        assertEquals(open, f.guard.breaker(CRM), "the same reading as GET /breakers");
        f.clock.advance(Duration.ofSeconds(30));
        assertEquals(BreakerState.HALF_OPEN, readings.handlers(List.of(SYNC)).orElseThrow().breakers().get(CRM).state());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantWindowSplitsTheLastMinuteFromReservedSlots(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(5, Duration.ofSeconds(5)));
        var readings = new GuardReadings(target.redis(), f.keys, GuardFixture.BREAKER, f.clock);
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("i-0", "i-1", "i-2", "i-3", "i-4", "i-5", "i-6", "i-7")));

        assertEquals(new GuardReadings.TenantUsage(3, 5), readings.tenants(List.of("acme", "quiet")).orElseThrow().get("acme"),
                "three of five at once; the rest paced through the window and beyond");
        assertEquals(new GuardReadings.TenantUsage(0, 0), readings.tenants(List.of("acme", "quiet")).orElseThrow().get("quiet"));
    }

    /** A producer may make no other round trip for long: what its reservation deferred is on the chart at once. */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aReservationsDeferralsAreCountedWithoutWaitingForAnotherRoundTrip(RedisTargets.Target target) {
        var f = new GuardFixture(target.redis(), new RunnerConfig.TenantLimit(5, Duration.ofSeconds(5)));
        var readings = new GuardReadings(target.redis(), f.keys, GuardFixture.BREAKER, f.clock);
        f.guard.reserveTenantSlots(GuardFixture.named("acme", Trigger.MANUAL, List.of("r-0", "r-1", "r-2", "r-3", "r-4", "r-5", "r-6", "r-7")));

        assertEquals(Map.of(DeferReason.TENANT_LIMIT, 5L), readings.deferrals(1).orElseThrow().getFirst().byReason());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void deferralsAreCountedPerMinuteAndReasonOnTheNextRoundTrip(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var readings = new GuardReadings(target.redis(), f.keys, GuardFixture.BREAKER, f.clock);
        var oneCall = new ConcurrencyAndRate(1, 0);
        f.admitOne(group(CRM, SYNC.handlerKey(), oneCall, items("c", "acme", Trigger.WEBHOOK, 3)));
        f.admitOne(group(CRM, SYNC.handlerKey(), oneCall, items("d", "acme", Trigger.WEBHOOK, 2)));
        assertTrue(readings.deferrals(1).orElseThrow().getFirst().byReason().isEmpty(), "not sent yet: it rides on the next round trip");

        f.guard.report(List.of());
        List<GuardReadings.MinuteDeferrals> minutes = readings.deferrals(3).orElseThrow();
        assertEquals(3, minutes.size());
        assertEquals(Instant.ofEpochMilli(f.clock.millis()).truncatedTo(java.time.temporal.ChronoUnit.MINUTES), minutes.get(2).minute());
        assertEquals(Map.of(DeferReason.HANDLER_CONCURRENCY, 2L), minutes.get(2).byReason());
        assertTrue(minutes.get(1).byReason().isEmpty());
    }

    @Test
    void countingDeferralsAddsNoRoundTrip() {
        var meter = new CostMeter();
        try (Redis counted = Redis.connect(RedisTargets.standaloneUrl(), meter)) {
            var f = new GuardFixture(counted, GuardFixture.TENANT);
            var limits = new ConcurrencyAndRate(1, 0);
            // Once so that Redis knows every script: a first EVALSHA of a script costs a reload round trip.
            f.admitOne(group(CRM, "warm-up", limits, items("w", "acme", Trigger.WEBHOOK, 2)));
            f.admitOne(group(CRM, "warm-up", limits, items("x", "acme", Trigger.WEBHOOK, 1)));
            f.guard.report(List.of(GuardFixture.tally(CRM, "warm-up", 1, 0, List.of())));
            var before = meter.snapshot();
            f.admitOne(group(CRM, SYNC.handlerKey(), limits, items("d", "acme", Trigger.WEBHOOK, 3)));
            f.admitOne(group(CRM, SYNC.handlerKey(), limits, items("e", "acme", Trigger.WEBHOOK, 3)));
            f.guard.report(List.of());
            assertEquals(3, meter.snapshot().minus(before).redisRoundTrips(), "two admissions and a report, nothing more");
            var readings = new GuardReadings(counted, f.keys, GuardFixture.BREAKER, f.clock);
            long concurrency = readings.deferrals(1).orElseThrow().getFirst().byReason().get(DeferReason.HANDLER_CONCURRENCY);
            assertEquals(1 + 3, concurrency, "1 in the warm-up, none of the first batch (it holds the lease), 3 of the second");
        }
    }

    @Test
    void redisAwayReadsAsUnknown() {
        try (Redis away = Redis.connect(RedisTargets.closedPortUrl(), Duration.ofMillis(200))) {
            var readings = new GuardReadings(away, RedisTargets.uniqueKeys(), GuardFixture.BREAKER, dev.runner.redis.TestClock.now());
            assertTrue(readings.handlers(List.of(SYNC)).isEmpty());
            assertTrue(readings.tenants(List.of("acme")).isEmpty());
            assertTrue(readings.deferrals(60).isEmpty());
        }
    }
}
