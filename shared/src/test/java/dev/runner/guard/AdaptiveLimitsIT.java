package dev.runner.guard;

import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;

import static dev.runner.guard.GuardFixture.count;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Adaptive limits (AIMD) on real Redis, single and cluster: adaptLimits-2.lua learns from the
 * partner's answers, admitHandler-10.lua applies what it learnt.
 */
class AdaptiveLimitsIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";
    private static final ConcurrencyAndRate LIMITS = new ConcurrencyAndRate(10, 0);

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aRetryAfterStopsTheScopeUntilItPassesAndCutsItsConcurrency(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission first = f.admitGroup(group(CRM, SYNC, LIMITS, items("a", "acme", Trigger.MANUAL, 10)));
        assertEquals(10, first.leaseTokens().size());

        f.guard.throttled(first, throttledCall("a-0", "acme", 2_000));
        var stopped = assertInstanceOf(Admission.Deferred.class, f.admitOne(group(CRM, SYNC, LIMITS, items("b", "acme", Trigger.MANUAL, 1)))
                .getFirst());
        assertEquals(DeferReason.ADAPTIVE_STOP, stopped.reason());
        assertEquals(Duration.ofSeconds(2), stopped.delay(), "until the Retry-After has passed: no call into it early");

        f.guard.report(List.of(GuardFixture.released(first)));
        f.clock.advance(Duration.ofSeconds(2));
        GroupAdmission after = f.admitGroup(group(CRM, SYNC, LIMITS, items("c", "acme", Trigger.MANUAL, 10)));
        assertEquals(7, after.leaseTokens().size(), "10 x 0.7: the scope's effective concurrency after one cut");
        assertTrue(after.adapted());
        assertFalse(after.breakerClean(), "its successes must be told: they raise it");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aWaveOfThrottledCallsAdmittedBeforeTheCutCutsOnce(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission wave = f.admitGroup(group(CRM, SYNC, LIMITS, items("a", "acme", Trigger.MANUAL, 10)));
        f.clock.advance(Duration.ofMillis(5));
        for (int i = 0; i < 10; i++) {
            f.guard.throttled(wave, throttledCall("a-" + i, "acme", 1_000));
        }
        f.guard.report(List.of(GuardFixture.released(wave)));
        f.clock.advance(Duration.ofSeconds(1));
        assertEquals(7, f.admitGroup(group(CRM, SYNC, LIMITS, items("b", "acme", Trigger.MANUAL, 10))).leaseTokens().size(),
                "ten answers to one wave of calls: one cut, not ten");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantSingledOutIsStoppedAloneWhileAnotherTenantKeepsItsPace(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission mixed = f.admitGroup(group(CRM, SYNC, LIMITS, List.of(new Candidate("a-0", "acme", 2), new Candidate("g-0", "globex", 2))));
        f.guard.throttled(mixed, throttledCall("a-0", "acme", 5_000));
        f.guard.report(List.of(GuardFixture.released(mixed)));

        List<Admission> next = f.admitOne(group(CRM, SYNC, LIMITS, List.of(new Candidate("a-1", "acme", 2), new Candidate("g-1", "globex", 2))));
        var acme = assertInstanceOf(Admission.Deferred.class, next.get(0));
        assertEquals(DeferReason.ADAPTIVE_STOP, acme.reason(), "acme's scope of the handler is stopped");
        assertInstanceOf(Admission.Admitted.class, next.get(1), "globex is not held back");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void oneTimeoutIsNoiseTwoInARowCut(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission first = f.admitGroup(group(CRM, SYNC, LIMITS, items("a", "acme", Trigger.MANUAL, 1)));
        f.guard.report(List.of(report(first, List.of(call("a-0", GroupReport.Observed.TIMED_OUT)))));
        GroupAdmission all = f.admitGroup(group(CRM, SYNC, LIMITS, items("b", "acme", Trigger.MANUAL, 10)));
        assertEquals(10, all.leaseTokens().size(), "one timeout: no cut");
        f.guard.report(List.of(GuardFixture.released(all)));

        f.clock.advance(Duration.ofMillis(5));
        GroupAdmission second = f.admitGroup(group(CRM, SYNC, LIMITS, items("c", "acme", Trigger.MANUAL, 1)));
        f.guard.report(List.of(report(second, List.of(call("c-0", GroupReport.Observed.TIMED_OUT)))));
        assertEquals(7, f.admitGroup(group(CRM, SYNC, LIMITS, items("d", "acme", Trigger.MANUAL, 10))).leaseTokens().size(),
                "the second in a row: cut to 7 of 10");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void successesRaiseTheScopeOneStepPerProbeIntervalBackToWhatIsConfigured(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        var limits = new ConcurrencyAndRate(3, 0);
        GroupAdmission first = f.admitGroup(group(CRM, SYNC, limits, items("a", "acme", Trigger.MANUAL, 3)));
        f.guard.throttled(first, throttledCall("a-0", "acme", 1_000));
        f.guard.report(List.of(GuardFixture.released(first)));
        f.clock.advance(Duration.ofSeconds(5));
        GroupAdmission cut = f.admitGroup(group(CRM, SYNC, limits, items("b", "acme", Trigger.MANUAL, 3)));
        assertEquals(2, cut.leaseTokens().size(), "3 x 0.7, at least 1");
        f.guard.report(List.of(report(cut, List.of(call("b-0", GroupReport.Observed.ANSWERED)))));
        assertEquals(2, f.admitGroup(group(CRM, SYNC, limits, items("c", "acme", Trigger.MANUAL, 3))).leaseTokens().size() ,
                "a success 5 s after the cut raises nothing: a probe interval is ten Retry-Afters, 10 s");
        f.guard.report(List.of());

        f.clock.advance(Duration.ofSeconds(5));
        f.redis.delete(f.keys.leases(CRM, SYNC));
        GroupAdmission probe = f.admitGroup(group(CRM, SYNC, limits, items("e", "acme", Trigger.MANUAL, 1)));
        f.guard.report(List.of(report(probe, List.of(call("e-0", GroupReport.Observed.ANSWERED)))));
        GroupAdmission restored = f.admitGroup(group(CRM, SYNC, limits, items("f", "acme", Trigger.MANUAL, 5)));
        assertEquals(3, restored.leaseTokens().size(), "raised one step, to the configured 3, never above");
        assertFalse(restored.adapted(), "the scope is forgotten: successes need no report again");
        assertTrue(restored.breakerClean());
        assertEquals(5, count(restored.decisions(), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aProbeThatFindsTheLimitIsTakenBackAndRepeated429sCutMultiplicatively(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        GroupAdmission first = f.admitGroup(group(CRM, SYNC, LIMITS, items("a", "acme", Trigger.MANUAL, 1)));
        f.guard.throttled(first, throttledCall("a-0", "acme", 1_000));
        f.guard.report(List.of(GuardFixture.released(first)));
        f.clock.advance(AdaptiveLimits.PROBE_FLOOR);
        GroupAdmission ok = f.admitGroup(group(CRM, SYNC, LIMITS, items("b", "acme", Trigger.MANUAL, 1)));
        f.guard.report(List.of(report(ok, List.of(call("b-0", GroupReport.Observed.ANSWERED)))));
        assertEquals(8, leasesFor(f, "c"), "7, raised one step");

        f.clock.advance(Duration.ofMillis(5));
        GroupAdmission probe = f.admitGroup(group(CRM, SYNC, LIMITS, items("d", "acme", Trigger.MANUAL, 1)));
        f.clock.advance(Duration.ofMillis(5));
        f.guard.throttled(probe, throttledCall("d-0", "acme", 1_000));
        f.guard.report(List.of(GuardFixture.released(probe)));
        f.clock.advance(Duration.ofSeconds(1));
        assertEquals(7, leasesFor(f, "e"), "the 429 right after the raise takes it back");

        GroupAdmission again = f.admitGroup(group(CRM, SYNC, LIMITS, items("g", "acme", Trigger.MANUAL, 1)));
        f.clock.advance(Duration.ofMillis(5));
        f.guard.throttled(again, throttledCall("g-0", "acme", 1_000));
        f.guard.report(List.of(GuardFixture.released(again)));
        f.clock.advance(Duration.ofSeconds(1));
        assertEquals(4, leasesFor(f, "h"), "a repeated 429: 7 x 0.7");
    }

    /** The leases a fresh admission of ten items gets, given back at once. */
    private static int leasesFor(GuardFixture f, String prefix) {
        GroupAdmission admission = f.admitGroup(group(CRM, SYNC, LIMITS, items(prefix, "acme", Trigger.MANUAL, 10)));
        f.guard.report(List.of(report(admission, List.of())));
        return admission.leaseTokens().size();
    }

    private static GroupReport.Call throttledCall(String itemId, String tenant, long retryAfterMs) {
        return new GroupReport.Call(List.of(itemId), GroupReport.Observed.THROTTLED, List.of(tenant), retryAfterMs);
    }

    private static GroupReport.Call call(String itemId, GroupReport.Observed observed) {
        return new GroupReport.Call(List.of(itemId), observed, List.of("acme"), 0);
    }

    /** The report of an admission whose calls saw {@code calls}: its leases go back with them. */
    private static GroupReport report(GroupAdmission admission, List<GroupReport.Call> calls) {
        return new GroupReport(admission.request().integrationKey(), admission.request().handlerKey(), calls, admission.leaseTokens(),
                List.of(), admission.request().limits(), admission.admittedAtMs(), admission.adapted());
    }
}
