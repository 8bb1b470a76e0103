package dev.runner.guard;

import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The open to half-open rule, as every script that applies it behaves: a breaker (and a tenant's
 * scope of it) opened at t is open for each of them until t + open duration, and half-open for each
 * of them from then: the read (readBreaker), admission (admitHandler) and the report (reportOutcome)
 * agree to the millisecond.
 */
class HalfOpenMomentIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";
    private static final Duration OPEN = GuardFixture.BREAKER.openFor();

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void theIntegrationsBreakerHalfOpensForEveryScriptAtOnce(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        f.guard.report(List.of(GuardFixture.tally(CRM, SYNC, 0, GuardFixture.BREAKER.failureThreshold(), List.of())));
        long openedAt = f.clock.millis();

        f.clock.advance(OPEN.minusMillis(1));
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state(), "read, a millisecond before");
        var held = assertInstanceOf(Admission.Deferred.class, admit(f, "acme", "early").getFirst(), "admission, a millisecond before");
        assertEquals(DeferReason.BREAKER_OPEN, held.reason());

        f.clock.advance(Duration.ofMillis(1));
        BreakerSnapshot read = f.guard.breaker(CRM);
        assertEquals(BreakerState.HALF_OPEN, read.state(), "read, at the moment");
        assertEquals(openedAt + OPEN.toMillis(), read.halfOpenAtMs());
        assertInstanceOf(Admission.Admitted.class, admit(f, "acme", "probe").getFirst(), "admission, at the moment: a probe");
        f.guard.report(List.of(GuardFixture.calls(CRM, SYNC, true, List.of("probe-0"))));
        assertEquals(1, f.guard.breaker(CRM).halfOpenSuccesses(), "the report, at the moment: the probe's success counts");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantsScopeHalfOpensForEveryScriptAtOnce(RedisTargets.Target redis) {
        var f = new GuardFixture(redis);
        List<Candidate> both = new ArrayList<>(items("first-bad", "bad", Trigger.MANUAL, 1));
        both.addAll(items("first-good", "good", Trigger.MANUAL, 1));
        f.guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, both)));
        List<GroupReport.Call> failures = new ArrayList<>();
        for (int i = 0; i < GuardFixture.BREAKER.failureThreshold(); i++) {
            failures.add(new GroupReport.Call(List.of("f-" + i), false, List.of("bad")));
        }
        f.guard.report(List.of(new GroupReport(CRM, SYNC, failures, List.of(), List.of())));
        long openedAt = f.clock.millis();

        f.clock.advance(OPEN.minusMillis(1));
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).tenants().getFirst().state(), "read, a millisecond before");
        var held = assertInstanceOf(Admission.Deferred.class, admit(f, "bad", "early").getFirst(), "admission, a millisecond before");
        assertEquals(DeferReason.BREAKER_OPEN, held.reason());

        f.clock.advance(Duration.ofMillis(1));
        BreakerSnapshot.TenantScope read = f.guard.breaker(CRM).tenants().getFirst();
        assertEquals(BreakerState.HALF_OPEN, read.state(), "read, at the moment");
        assertEquals(openedAt + OPEN.toMillis(), read.halfOpenAtMs());
        assertInstanceOf(Admission.Admitted.class, admit(f, "bad", "probe").getFirst(), "admission, at the moment: the scope's probe");
        f.guard.report(List.of(new GroupReport(CRM, SYNC, List.of(new GroupReport.Call(List.of("probe-0"), true, List.of("bad"))),
                List.of(), List.of("probe-0"))));
        assertEquals(1, f.guard.breaker(CRM).tenants().getFirst().halfOpenSuccesses(), "the report, at the moment: the probe's success counts");
    }

    private static List<Admission> admit(GuardFixture f, String tenant, String prefix) {
        return f.admitOne(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items(prefix, tenant, Trigger.MANUAL, 1)));
    }
}
