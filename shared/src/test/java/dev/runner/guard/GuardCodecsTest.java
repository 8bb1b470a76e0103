package dev.runner.guard;

import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The capabilities' codecs: arguments in each script header's order, replies into records, one slot per call. No I/O. */
class GuardCodecsTest {

    private static final long NOW = 1_700_000_000_000L;

    private final Keys keys = new Keys("runner");
    private final GuardRoundTrips roundTrips = new GuardRoundTrips(Redis.connect("redis://127.0.0.1:1"), dev.runner.metrics.Metrics.NONE);
    private final Breaker breaker = new Breaker(keys, GuardFixture.BREAKER, roundTrips, java.time.Clock.systemUTC());
    private final HandlerLimits handlerLimits = new HandlerLimits(keys, GuardFixture.BREAKER, GuardFixture.TENANT.shortestDeferral(),
            Duration.ofSeconds(90), roundTrips);
    private final DeferralCounts deferralCounts = new DeferralCounts(keys, roundTrips);
    private final TenantWindow tenantWindow = new TenantWindow(keys, GuardFixture.TENANT, roundTrips, deferralCounts, java.time.Clock.systemUTC());
    private final AdaptiveLimits adaptiveLimits = new AdaptiveLimits(keys);

    @Test
    void aTenantsItemsGoInCallsOfAThousandAndComeBackAsOneAnswer() {
        List<String> ids = IntStream.range(0, 2_500).mapToObj(i -> "i-" + i).toList();
        Pipeline.Request<List<TenantWindow.Answer>> request = tenantWindow.admit("acme", GuardFixture.named("acme",
                dev.runner.trigger.Trigger.MANUAL, ids), NOW, Duration.ZERO);

        int head = 5 + TenantWindow.BACKLOG_PRIORITIES.size();
        assertEquals(List.of("2", "3", "5"), request.calls().getFirst().args().subList(5, head), "the backlog sets' priorities, in key order");
        assertEquals(Script.ADMIT_TENANT.keyCount(), request.calls().getFirst().keys().size(), "the window, one backlog set per priority");
        assertEquals(List.of(1_000, 1_000, 500), request.calls().stream().map(c -> (c.args().size() - head) / 2).toList());
        assertEquals(ids, request.calls().stream().flatMap(c -> java.util.stream.IntStream.range(0, (c.args().size() - head) / 2)
                .mapToObj(i -> c.args().get(head + 2 * i))).toList());
        assertEquals("2", request.calls().getFirst().args().get(head + 1), "each item with its priority");
        List<Object> replies = new ArrayList<>();
        request.calls().forEach(c -> replies.add(java.util.stream.IntStream.range(0, c.args().size() - head).mapToObj(i -> (Object) 1L).toList()));
        assertEquals(2_500, request.decode().apply(replies).size());
    }

    @Test
    void handlerRepliesDecodeIntoVerdictsInItemOrder() {
        GroupRequest group = new GroupRequest("crm-x", "sync", ConcurrencyAndRate.UNLIMITED, GuardFixture.items("a", "acme", dev.runner.trigger.Trigger.WEBHOOK, 2));
        var answer = handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(0L, 0L, 4L, 1_500L, 1L, 0L, 0L, 0L, 2L,
                "tok~acme*1:1:9000", "tok~acme*1:2:9020")));
        assertEquals(List.of(new HandlerLimits.Verdict(AdmitCode.ADMITTED, 0), new HandlerLimits.Verdict(AdmitCode.HANDLER_RATE, 1_500)),
                answer.verdicts());
        assertTrue(answer.breakerClean());
        assertFalse(answer.adapted());
        assertEquals(List.of("tok~acme*1:1:9000", "tok~acme*1:2:9020"), answer.leaseTokens(),
                "the leases as the script wrote them, each with its lane's tenants and end");
        assertFalse(answer.breakerNotClosed());
        assertFalse(handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(1L, 0L, 1L, 0L, 0L, 0L, 0L, 0L, 0L))).breakerClean(),
                "paused: no breaker flag");
        assertTrue(handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(0L, 0L, 0L, 0L, 0L, 1L, 0L, 1L, 2L, "x", "y")))
                .breakerNotClosed(), "half-open, probes admitted: the BreakerOpen metric still counts it");
        assertTrue(handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(2L, 900L, 2L, 900L, 0L, 0L, 0L, 0L, 0L)))
                .breakerNotClosed(), "open");
        assertTrue(handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(6L, 900L, 6L, 900L, 0L, 0L, 1L, 0L, 0L)))
                .adapted(), "an adaptive scope holds state");
        assertThrows(IllegalStateException.class, () -> handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(0L, 0L))));
        assertThrows(IllegalStateException.class, () -> handlerLimits.admit(group, NOW, "tok").decode()
                .apply(List.of(List.of(0L, 0L, 0L, 0L, 1L, 0L, 0L, 0L, 2L, "x"))), "two leases granted, one named");
        assertTrue(handlerLimits.admit(group, NOW, "tok").decode().apply(List.of(List.of(0L, 0L, 0L, 0L, 1L, 0L, 0L, 1L, 1L, "tok~acme*1:1:9")))
                .tenantLanes(), "tenants compete: each lease one tenant's");
        assertEquals("acme", GroupAdmission.tenantOfLease("tok~acme*3:1:9000"));
        assertEquals(List.of("acme", "globex"), GroupAdmission.tenantsOfLease("tok~acme*1,globex*2:1:9000"));
    }

    @Test
    void aReportTellsTheBreakerOnlyCallsThatAnsweredOrFailed() {
        var report = new GroupReport("crm-x", "sync", List.of(
                new GroupReport.Call(List.of("a", "b"), true), new GroupReport.Call(List.of("c"), false),
                new GroupReport.Call(List.of("d"), GroupReport.Observed.THROTTLED, List.of("acme"), 1_000)), List.of("t:1:5"),
                List.of("a", "b", "c", "d"));
        Redis.Call call = breaker.report(report, NOW);
        assertEquals(Script.RECORD_OUTCOME, call.script());
        assertEquals(List.of(Long.toString(NOW), "5", "30000", "2", "1", "2", "a", "b", "0", "0", "1", "c", "0"), call.args(),
                "the throttled call asks for less, which is no failure");
        assertTrue(report.adaptiveNews());
    }

    @Test
    void aFeedbackNamesEachCallsAnswerRetryAfterAndTenants() {
        var report = new GroupReport("crm-x", "sync", List.of(
                new GroupReport.Call(List.of("a"), GroupReport.Observed.ANSWERED, List.of("acme"), 0),
                new GroupReport.Call(List.of("b"), GroupReport.Observed.THROTTLED, List.of("acme", "globex"), 1_000),
                new GroupReport.Call(List.of("c"), GroupReport.Observed.TIMED_OUT, List.of(), 0)), List.of(), List.of(),
                new ConcurrencyAndRate(50, 600), NOW - 100, false);
        Redis.Call call = adaptiveLimits.feedback(report, NOW).calls().getFirst();
        assertEquals(Script.ADAPT_LIMITS, call.script());
        assertEquals(List.of(Long.toString(NOW), "50", "600", "700", "10000", "10", Long.toString(NOW - 100),
                "ok", "0", "1", "acme", "429", "1000", "2", "acme", "globex", "timeout", "0", "0"), call.args());
        var events = adaptiveLimits.feedback(report, NOW).decode().apply(List.of(List.of("t:acme", 1L, "h", 2L)));
        assertEquals(List.of(new AdaptiveLimits.Event("t:acme", AdaptiveLimits.Change.STOPPED), new AdaptiveLimits.Event("h",
                AdaptiveLimits.Change.CUT)), events);
        assertEquals("acme", events.getFirst().tenantId());
        assertEquals(null, events.getLast().tenantId());
    }

    @Test
    void everyCallTouchesOneClusterSlot() {
        GroupRequest group = new GroupRequest("crm-x", "sync", ConcurrencyAndRate.UNLIMITED, GuardFixture.items("a", "acme", dev.runner.trigger.Trigger.WEBHOOK, 1));
        List<Redis.Call> calls = new ArrayList<>(handlerLimits.admit(group, NOW, "tok").calls());
        calls.addAll(tenantWindow.admit("acme", GuardFixture.items("a", "acme", dev.runner.trigger.Trigger.MANUAL, 1), NOW, Duration.ZERO).calls());
        calls.add(breaker.report(new GroupReport("crm-x", "sync", List.of(), List.of("t:1:1"), List.of("a-0")), NOW));
        calls.add(handlerLimits.release("crm-x", "sync", List.of("t:2:1"), List.of("a-0"), NOW));
        calls.addAll(adaptiveLimits.feedback(new GroupReport("crm-x", "sync", List.of(), List.of(), List.of()), NOW).calls());
        calls.add(tenantWindow.refund("acme", GuardFixture.items("a", "acme", dev.runner.trigger.Trigger.MANUAL, 1), NOW));
        calls.add(tenantWindow.releaseRunCall("acme", java.util.UUID.randomUUID(), NOW));
        calls.addAll(Breaker.read(keys, GuardFixture.BREAKER.openFor(), "crm-x", NOW).calls());
        calls.add(deferralCounts.call(java.util.Map.of(DeferReason.TENANT_LIMIT, 2), NOW));
        calls.add(new WaitCounts(keys, roundTrips).call("acme", java.util.Map.of(new WaitCounts.Cause("crm-x", "sync", "tenant_limit"), 2), NOW));
        calls.add(dev.runner.callback.HeldLeases.holdCall(keys, "crm-x", "sync", "pending:a-0:" + (NOW + 1_000), NOW, NOW + 1_000));
        assertEquals(Script.values().length, calls.stream().map(Redis.Call::script).distinct().count(), "every script is built here");
        for (Redis.Call call : calls) {
            assertEquals(1, call.keys().stream().map(SlotHash::getSlot).distinct().count(), call.script() + " " + call.keys());
        }
    }
}
