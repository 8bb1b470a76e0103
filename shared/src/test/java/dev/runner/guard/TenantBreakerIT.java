package dev.runner.guard;

import dev.runner.metrics.Metrics;
import dev.runner.redis.RedisTargets;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.runner.guard.GuardFixture.count;
import static dev.runner.guard.GuardFixture.group;
import static dev.runner.guard.GuardFixture.items;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The breaker's tenant scopes (admitHandler-9.lua, reportOutcome-7.lua, readBreaker-2.lua) on real
 * Redis: one tenant whose calls fail opens its own scope, not the integration's; the partner
 * failing for several tenants opens the integration's as before.
 */
class TenantBreakerIT {

    private static final String CRM = "crm-x";
    private static final String SYNC = "sync";

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void oneTenantsFailuresOpenItsOwnScopeAndTheOtherTenantKeepsGoing(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        List<String> transitions = new CopyOnWriteArrayList<>();
        Guard guard = recording(f, transitions);
        admitBoth(guard, "first");

        guard.report(List.of(failures("bad", 5, "b")));

        BreakerSnapshot breaker = guard.breaker(CRM);
        assertEquals(BreakerState.CLOSED, breaker.state(), "one tenant's failures, with another tenant about: the integration stays closed");
        assertEquals(List.of(new BreakerSnapshot.TenantScope("bad", BreakerState.OPEN, 0, 0, f.clock.millis(), f.clock.millis() + 30_000)),
                breaker.tenants());
        assertEquals(List.of("tenant opened crm-x bad"), transitions);
        assertEquals("open", breaker.toJson().path("tenants").path(0).path("state").asText(), "GET /breakers/{integrationKey} shows the scope");
        assertEquals("bad", breaker.toJson().path("tenants").path(0).path("tenantId").asText());

        List<Admission> good = guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("g", "good", Trigger.MANUAL, 10))))
                .getFirst().decisions();
        assertEquals(10, count(good, Admission.Admitted.class), "the healthy tenant is not deferred");
        var held = assertInstanceOf(Admission.Deferred.class,
                guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("x", "bad", Trigger.MANUAL, 1))))
                        .getFirst().decisions().getFirst());
        assertEquals(DeferReason.BREAKER_OPEN, held.reason(), "the failing tenant is held as the breaker holds everyone today");
        assertEquals(Duration.ofSeconds(30), held.delay());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void theHealthyTenantsSuccessesDoNotLetTheFailingTenantHammerOn(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        admitBoth(f.guard, "first");
        for (int round = 0; round < 5; round++) {
            f.guard.report(List.of(failures("bad", 1, "b" + round), successes("good", 1, "g" + round)));
        }
        assertEquals(BreakerState.CLOSED, f.guard.breaker(CRM).state());
        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).tenants().getFirst().state(),
                "the integration's count starts over at each success of good's, the tenant's own does not");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void failuresOfSeveralTenantsOpenTheIntegrationAsBefore(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        admitBoth(f.guard, "first");

        f.guard.report(List.of(failures("bad", 3, "b"), failures("good", 2, "g")));

        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());
        assertEquals(List.of(), f.guard.breaker(CRM).tenants(), "open for all: the tenant scopes start over");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void theOnlyTenantOfAnIntegrationOpensTheIntegrationAsBefore(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        f.guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("a", "acme", Trigger.MANUAL, 5))));

        f.guard.report(List.of(failures("acme", 5, "a")));

        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aSecondTenantSeenLongerThanAMinuteAgoNoLongerCounts(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        admitBoth(f.guard, "first");
        f.clock.advance(Duration.ofSeconds(61));

        f.guard.report(List.of(failures("bad", 5, "b")));

        assertEquals(BreakerState.OPEN, f.guard.breaker(CRM).state(), "bad is, as far as anyone can tell, the integration's only tenant");
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantScopeHalfOpensWithOneProbeAtATimeAndClosesAfterItsSuccesses(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        List<String> transitions = new CopyOnWriteArrayList<>();
        Guard guard = recording(f, transitions);
        admitBoth(guard, "first");
        guard.report(List.of(failures("bad", 5, "b")));
        f.clock.advance(Duration.ofSeconds(30));
        assertEquals(BreakerState.HALF_OPEN, guard.breaker(CRM).tenants().getFirst().state());

        for (int probe = 0; probe < GuardFixture.BREAKER.halfOpenSuccesses(); probe++) {
            List<Admission> decisions = guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED,
                    items("p" + probe, "bad", Trigger.MANUAL, 3)))).getFirst().decisions();
            assertEquals(1, count(decisions, Admission.Admitted.class), "one probe of the tenant's at a time");
            assertTrue(decisions.stream().skip(1).allMatch(d -> d instanceof Admission.Deferred deferred
                    && deferred.reason() == DeferReason.BREAKER_PROBING));
            assertEquals(1, count(guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED,
                    items("again" + probe, "bad", Trigger.MANUAL, 1)))).getFirst().decisions(), Admission.Deferred.class),
                    "its probe is out");
            guard.report(List.of(successes("bad", 1, "p" + probe + "-0")));
        }

        assertEquals(List.of(), guard.breaker(CRM).tenants(), "closed: nothing left to tell");
        assertEquals(List.of("tenant opened crm-x bad", "tenant closed crm-x bad"), transitions);
        assertEquals(4, count(guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("after", "bad", Trigger.MANUAL, 4))))
                .getFirst().decisions(), Admission.Admitted.class));
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aFailedTenantProbeReopensTheScopeAndLateAnswersAreIgnored(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        admitBoth(f.guard, "first");
        f.guard.report(List.of(failures("bad", 5, "b")));
        f.guard.report(List.of(failures("bad", 3, "late")));
        assertEquals(f.clock.millis(), f.guard.breaker(CRM).tenants().getFirst().openedAtMs(), "late answers while open change nothing");

        f.clock.advance(Duration.ofSeconds(30));
        List<Admission> probe = f.guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("p", "bad", Trigger.MANUAL, 1))))
                .getFirst().decisions();
        assertInstanceOf(Admission.Admitted.class, probe.getFirst());
        f.guard.report(List.of(failures("bad", 1, "p-0")));

        BreakerSnapshot.TenantScope reopened = f.guard.breaker(CRM).tenants().getFirst();
        assertEquals(BreakerState.OPEN, reopened.state());
        assertEquals(f.clock.millis(), reopened.openedAtMs());
        assertEquals(BreakerState.CLOSED, f.guard.breaker(CRM).state());
    }

    @ParameterizedTest
    @MethodSource("dev.runner.redis.RedisTargets#both")
    void aTenantWithFailuresCountedIsNotCleanSoItsSuccessesAreTold(RedisTargets.Target target) {
        var f = new GuardFixture(target);
        admitBoth(f.guard, "first");
        f.guard.report(List.of(failures("bad", 2, "b")));
        f.guard.report(List.of(successes("good", 1, "g")));

        GroupAdmission bad = f.guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("n", "bad", Trigger.MANUAL, 1)))).getFirst();
        assertFalse(bad.breakerClean(), "bad's own count is not zero: its success must be told to reset it");
        f.guard.report(List.of(successes("bad", 1, "n-0")));
        assertEquals(List.of(), f.guard.breaker(CRM).tenants());
        assertTrue(f.guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, items("m", "bad", Trigger.MANUAL, 1))))
                .getFirst().breakerClean(), "nothing counted any more: clean again");
    }

    /** One admission with both tenants' items: admission has seen a second tenant of the integration. */
    private static void admitBoth(Guard guard, String prefix) {
        List<Candidate> both = new ArrayList<>(items(prefix + "-bad", "bad", Trigger.MANUAL, 2));
        both.addAll(items(prefix + "-good", "good", Trigger.MANUAL, 2));
        guard.admit(List.of(group(CRM, SYNC, ConcurrencyAndRate.UNLIMITED, both)));
    }

    /** {@code count} failed calls of one item each, of one tenant; the first carries item prefix-0, and so on. */
    private static GroupReport failures(String tenant, int count, String prefix) {
        return calls(tenant, count, prefix, false);
    }

    private static GroupReport successes(String tenant, int count, String prefix) {
        return calls(tenant, count, prefix, true);
    }

    private static GroupReport calls(String tenant, int count, String prefix, boolean up) {
        List<GroupReport.Call> calls = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = count == 1 ? prefix : prefix + "-" + i;
            ids.add(id);
            calls.add(new GroupReport.Call(List.of(id), up, List.of(tenant)));
        }
        return new GroupReport(CRM, SYNC, calls, List.of(), ids);
    }

    /** A Guard on the fixture's keys and clock whose metrics write each breaker transition into {@code transitions}. */
    private static Guard recording(GuardFixture f, List<String> transitions) {
        return new Guard(f.redis, f.keys, new Guard.Settings(GuardFixture.BREAKER, GuardFixture.TENANT, GuardFixture.LEASE_TTL),
                f.clock, new Metrics() {
            @Override
            public void tenantBreakerOpened(String integrationKey, String tenantId) {
                transitions.add("tenant opened " + integrationKey + " " + tenantId);
            }

            @Override
            public void tenantBreakerClosed(String integrationKey, String tenantId) {
                transitions.add("tenant closed " + integrationKey + " " + tenantId);
            }

            @Override
            public void breakerOpened(String integrationKey) {
                transitions.add("opened " + integrationKey);
            }
        });
    }
}
