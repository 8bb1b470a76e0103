package dev.runner.guard;

import dev.runner.metrics.Metrics;
import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** The breaker's transitions through admitHandler-9.lua and reportOutcome-7.lua, on real Redis (single and cluster) with a hand-moved clock. */
class BreakerIT {

    private static final String CRM = "crm-x";

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void opensAfterFiveFailures(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        for (int i = 0; i < 4; i++) {
            fail(f, 1);
        }
        assertEquals(BreakerState.CLOSED, f.guard.breaker(CRM).state());
        assertEquals(4, f.guard.breaker(CRM).failures());
        fail(f, 1);

        BreakerSnapshot open = f.guard.breaker(CRM);
        assertEquals(BreakerState.OPEN, open.state());
        assertEquals(f.clock.millis(), open.openedAtMs());
        var decision = assertInstanceOf(Admission.Deferred.class, admit(f, "after-open").getFirst());
        assertEquals(DeferReason.BREAKER_OPEN, decision.reason());
        assertEquals(Duration.ofSeconds(30), decision.delay());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void successResetsConsecutiveFailures(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 4);
        f.guard.report(List.of(GuardFixture.tally(CRM, "sync", 1, 0, List.of())));
        fail(f, 4);
        assertEquals(BreakerState.CLOSED, f.guard.breaker(CRM).state());
        fail(f, 1);
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void openDefersWithTheTimeLeftUntilHalfOpen(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(12));
        var decision = assertInstanceOf(Admission.Deferred.class, admit(f, "wait").getFirst());
        assertEquals(Duration.ofSeconds(18), decision.delay());
        assertEquals(DeferReason.BREAKER_OPEN, decision.reason());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void halfOpenAfterOpenMs(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofMillis(29_999));
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());
        assertInstanceOf(Admission.Deferred.class, admit(f, "early").getFirst());

        f.clock.advance(Duration.ofMillis(1));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
        assertInstanceOf(Admission.Admitted.class, admit(f, "probe").getFirst());
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void closesAfterTwoSuccesses(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));
        List<Admission> probes = admit(f, "probe", 2);
        assertEquals(2, GuardFixture.count(probes, Admission.Admitted.class));

        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("probe-0"))));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
        assertEquals(1, f.guard.breaker(CRM).halfOpenSuccesses());
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("probe-1"))));

        BreakerSnapshot closed = f.guard.breaker(CRM);
        assertEquals(BreakerState.CLOSED, closed.state());
        assertEquals(0, closed.failures());
        assertEquals(10, GuardFixture.count(admit(f, "flow", 10), Admission.Admitted.class));
    }

    /** Each transition a report makes is counted once: open on the fifth failure, closed on the second probe's success. */
    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void reportsCountTheTransitionsTheyMake(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        List<String> transitions = new CopyOnWriteArrayList<>();
        var guard = new Guard(f.redis, f.keys, new Guard.Settings(GuardFixture.BREAKER, GuardFixture.TENANT, GuardFixture.LEASE_TTL), f.clock,
                new Metrics() {
                    @Override
                    public void breakerOpened(String integrationKey) {
                        transitions.add("opened " + integrationKey);
                    }

                    @Override
                    public void breakerClosed(String integrationKey) {
                        transitions.add("closed " + integrationKey);
                    }
                });
        for (int i = 0; i < 6; i++) {
            guard.report(List.of(GuardFixture.tally(CRM, "sync", 0, 1, List.of())));
        }
        assertEquals(List.of("opened " + CRM), transitions, "the fifth failure opens it; the sixth is a late answer");

        f.clock.advance(Duration.ofSeconds(30));
        List<Admission> probes = guard.admit(List.of(group(CRM, "sync", ConcurrencyAndRate.UNLIMITED,
                items("probe", "acme", Trigger.WEBHOOK, 2)))).getFirst().decisions();
        assertEquals(2, GuardFixture.count(probes, Admission.Admitted.class));
        guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("probe-0"))));
        guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("probe-1"))));
        assertEquals(List.of("opened " + CRM, "closed " + CRM), transitions);
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void halfOpenFailureReopens(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));
        admit(f, "probe", 1);
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", false, List.of("probe-0"))));

        BreakerSnapshot reopened = f.guard.breaker(CRM);
        assertEquals(BreakerState.OPEN, reopened.state());
        assertEquals(f.clock.millis(), reopened.openedAtMs());
        var decision = assertInstanceOf(Admission.Deferred.class, admit(f, "again").getFirst());
        assertEquals(Duration.ofSeconds(30), decision.delay());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void halfOpenAdmitsBoundedProbes(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));

        List<Admission> first = admit(f, "a", 5);
        assertEquals(2, GuardFixture.count(first, Admission.Admitted.class));
        var waiting = assertInstanceOf(Admission.Deferred.class, first.get(4));
        assertEquals(DeferReason.BREAKER_PROBING, waiting.reason());
        assertEquals(GuardFixture.TENANT.shortestDeferral(), waiting.delay());
        assertEquals(0, GuardFixture.count(admit(f, "b", 3), Admission.Admitted.class), "probes still in flight");

        // A probe ends with a success: its slot is free for the next probe.
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("a-0"))));
        assertEquals(1, GuardFixture.count(admit(f, "c", 3), Admission.Admitted.class));

        // Probes whose worker died free their slot after the lease TTL.
        f.clock.advance(GuardFixture.LEASE_TTL);
        assertEquals(2, GuardFixture.count(admit(f, "d", 3), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void lateOutcomesWhileOpenAreIgnored(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        long openedAt = f.guard.breaker(CRM).openedAtMs();
        f.clock.advance(Duration.ofSeconds(1));
        f.guard.report(List.of(GuardFixture.tally(CRM, "sync", 3, 2, List.of())));
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());
        assertEquals(openedAt, f.guard.breaker(CRM).openedAtMs());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void lateAnswersToCallsAdmittedBeforeOpeningDoNotDecideHalfOpen(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        assertEquals(4, GuardFixture.count(admit(f, "early", 4), Admission.Admitted.class));
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());

        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("early-0", "early-1"))));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
        assertEquals(0, f.guard.breaker(CRM).halfOpenSuccesses(), "two late successes are no probe successes");
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", false, List.of("early-2"))));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state(), "a late failure does not re-open it");

        List<Admission> probes = admit(f, "probe", 2);
        assertEquals(2, GuardFixture.count(probes, Admission.Admitted.class));
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("probe-0", "probe-1"))));
        assertEquals(BreakerState.CLOSED, f.guard.breaker(CRM).state(), "the probes decide");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aProbeOfAnEarlierHalfOpenPeriodDoesNotCount(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));
        assertEquals(2, GuardFixture.count(admit(f, "first", 2), Admission.Admitted.class));
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", false, List.of("first-1"))));
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());

        f.clock.advance(Duration.ofSeconds(30));
        f.guard.report(List.of(GuardFixture.calls(CRM, "sync", true, List.of("first-0"))));
        BreakerSnapshot snapshot = f.guard.breaker(CRM);
        assertEquals(BreakerState.HALF_OPEN, snapshot.state());
        assertEquals(0, snapshot.halfOpenSuccesses(), "first-0 probed the previous half-open period");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aBatchCallCarryingTwoProbesCountsOnce(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(30));
        admit(f, "probe", 2);
        f.guard.report(List.of(new GroupReport(CRM, "sync",
                List.of(new GroupReport.Call(List.of("probe-0", "probe-1"), true)), List.of(), List.of("probe-0", "probe-1"))));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
        assertEquals(1, f.guard.breaker(CRM).halfOpenSuccesses());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void readingTheBreakerWritesNothing(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        fail(f, 5);
        f.clock.advance(Duration.ofSeconds(31));
        assertEquals(BreakerState.HALF_OPEN, f.guard.breaker(CRM).state());
        assertEquals("open", f.redis.hashGetAll(f.keys.breaker(CRM)).get("state"),
                "the read shows the transition the next admission or report writes");
        BreakerSnapshot snapshot = f.guard.breaker(CRM);
        assertEquals(snapshot.openedAtMs() + 30_000, snapshot.halfOpenAtMs());
    }

    private static void fail(GuardFixture f, int failures) {
        f.guard.report(List.of(GuardFixture.tally(CRM, "sync", 0, failures, List.of())));
    }

    private static List<Admission> admit(GuardFixture f, String prefix) {
        return admit(f, prefix, 1);
    }

    private static List<Admission> admit(GuardFixture f, String prefix, int count) {
        return f.admitOne(group(CRM, "sync", ConcurrencyAndRate.UNLIMITED, items(prefix, "acme", Trigger.WEBHOOK, count)));
    }
}
