package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.testing.FakeHandler;
import dev.runner.testing.LimitedPartner;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * W11 adaptive limits and W12 weighted share (BENCH.md): partners that publish their limits only in
 * their answers (429 with Retry-After), and tenants of unequal weights on one limited handler.
 */
final class FlowBench {

    /** The part of a workload's start not measured: the limits are learnt in it. */
    private static final Duration LEARNING = Duration.ofSeconds(10);

    private FlowBench() {}

    static void adaptive() {
        partnerAtOnce();
        partnerPerTenant();
    }

    /**
     * W11a: a handler configured at concurrency 50 whose partner takes 5 calls at once (100 ms each, so 50 calls/s)
     * and answers 429 Retry-After: 1 beyond.
     */
    static void partnerAtOnce() {
        int items = Integer.getInteger("w11a.items", 3000);
        int atOnce = Integer.getInteger("w11a.atOnce", 5);
        Duration callTime = Duration.ofMillis(Long.getLong("w11a.callMs", 100));
        Duration budget = Duration.ofSeconds(Long.getLong("w11.budgetS", 180));
        LimitedPartner partner = LimitedPartner.atOnce(atOnce, callTime, 1);
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))) {
            stack.integration("w11a", "call", false, Json.object().put("concurrency", 50), List.of("w11a-tenant"), "w11-secret-0123456789");
            stack.handlers.handler("call").pages(Math.max(1, items / 500), Math.min(500, items)).itemReply(partner::process);
            long start = System.nanoTime();
            UUID run = stack.manualRun("w11a-tenant", "w11a", "call");
            boolean ended = awaitEndedWithin(stack, List.of(run), budget);
            double seconds = (System.nanoTime() - start) / 1e9;
            double capacityPerSecond = atOnce * 1e9 / callTime.toNanos();
            System.out.printf("%nW11a adaptive: %d items, handler configured at concurrency 50; the partner serves %d calls at once"
                    + " (%d ms each: %.0f calls/s) and answers 429 Retry-After: 1 beyond%n", items, atOnce, callTime.toMillis(), capacityPerSecond);
            Share share = Share.of(partner.answers(), start, null);
            long succeeded = stack.count(run, "succeeded");
            System.out.printf("  after the first %d s: %.0f %% of the partner's capacity used (%.1f calls/s served of %.0f), %.1f %% of calls answered 429%n",
                    LEARNING.toSeconds(), 100 * share.servedPerSecond() / capacityPerSecond, share.servedPerSecond(), capacityPerSecond,
                    100 * share.refusedShare());
            System.out.printf("  %s: %d of %d succeeded in %.1f s (ideal %.1f s); dead %d (goal 0), lost %s%n", ended ? "done" : "NOT done within the budget",
                    succeeded, items, seconds, items / capacityPerSecond, stack.count(run, "dead"),
                    ended ? Long.toString(items - succeeded - stack.count(run, "dead")) : "(not ended)");
            System.out.printf("  GET /handlers: %s%n", handlerView(stack, "w11a", "call"));
        }
    }

    /** Waits for the runs to end, at most {@code budget}; false when they had not (the workload's figures are then of the budget). */
    private static boolean awaitEndedWithin(BenchStack stack, List<UUID> runs, Duration budget) {
        try {
            stack.awaitEnded(runs, budget);
            return true;
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** W11b: a partner allowing 300 calls a minute per tenant, 429 beyond; 4 tenants backlogged on one handler. */
    static void partnerPerTenant() {
        int tenants = Integer.getInteger("w11b.tenants", 4);
        int perMinute = Integer.getInteger("w11b.perMinute", 300);
        int perTenant = Integer.getInteger("w11b.items", 3 * perMinute);
        LimitedPartner partner = LimitedPartner.perTenantPerMinute(perMinute, Duration.ofMillis(20));
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))) {
            List<String> tenantIds = new ArrayList<>();
            for (int t = 0; t < tenants; t++) {
                tenantIds.add("w11b-tenant-" + t);
            }
            stack.integration("w11b", "call", false, Json.object().put("concurrency", 20), tenantIds, "w11-secret-0123456789");
            // Pages of at most 500 items (the run worker's limit) that add up to the items asked for, as near as whole pages allow.
            int pages = Math.ceilDiv(perTenant, 500);
            int items = perTenant / pages * pages;
            stack.handlers.handler("call").pages(pages, items / pages).itemReply(partner::process);
            long start = System.nanoTime();
            List<UUID> runs = stack.manualRuns(tenantIds, "w11b", "call");
            boolean ended = awaitEndedWithin(stack, runs, Duration.ofMinutes(perTenant / perMinute + 2));
            System.out.printf("%nW11b adaptive: %d tenants x %d items; the partner allows %d calls a minute per tenant, 429 beyond"
                    + " (Retry-After: until the tenant's oldest call leaves its minute)%n", tenants, items, perMinute);
            long dead = 0;
            long lost = 0;
            for (int t = 0; t < tenants; t++) {
                String tenant = tenantIds.get(t);
                Share share = Share.of(partner.answers(), start, tenant);
                System.out.printf("  %s after the first %d s: %.0f %% of its %d/min (%.0f/min served), %.1f %% of its calls answered 429%n", tenant,
                        LEARNING.toSeconds(), 100 * share.servedPerSecond() * 60 / perMinute, perMinute, share.servedPerSecond() * 60,
                        100 * share.refusedShare());
                dead += stack.count(runs.get(t), "dead");
                lost += items - stack.count(runs.get(t), "succeeded") - stack.count(runs.get(t), "dead");
            }
            System.out.printf("  goal: each >= 90 %% of %d/min, <= 5 %% answered 429; %s; items dead %d (goal 0), lost %s%n", perMinute,
                    ended ? "done" : "NOT done within the budget", dead, ended ? Long.toString(lost) : "(not ended)");
            System.out.printf("  GET /handlers: %s%n", handlerView(stack, "w11b", "call"));
        }
    }

    /**
     * W12: two tenants weighted 3:1, both backlogged on a handler with concurrency 4, 50 ms calls: the calls' ratio
     * while both wait; then the light tenant alone gets the whole handler.
     */
    static void weightedShare() {
        int items = Integer.getInteger("w12.items", 1200);
        long callMs = Long.getLong("w12.callMs", 50);
        int concurrency = 4;
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))) {
            stack.integration("w12", "call", false, Json.object().put("concurrency", concurrency), List.of("heavy", "light"),
                    "w12-secret-0123456789");
            stack.call("PUT", "/tenants/heavy/integrations/w12", Json.object().put("enabled", true)
                    .put("webhookSecret", "w12-secret-0123456789").put("weight", 3), 200);
            stack.handlers.handler("call").pages(Math.max(1, items / 500), Math.min(500, items))
                    .itemReply(item -> {
                        java.util.concurrent.locks.LockSupport.parkNanos(callMs * 1_000_000);
                        return FakeHandler.Reply.OK;
                    });
            var window = Bench.Window.open("w12", stack);
            List<UUID> runs = stack.manualRuns(List.of("heavy", "light"), "w12", "call");
            stack.awaitEnded(runs, Duration.ofMinutes(10));
            var used = window.close();
            Map<String, List<Long>> callsAt = new LinkedHashMap<>();
            for (FakeHandler.Call call : stack.handlers.itemCalls("call")) {
                for (JsonNode item : FakeHandler.items(call)) {
                    callsAt.computeIfAbsent(item.path("tenantId").asText(), t -> new ArrayList<>()).add(call.receivedAtNanos());
                }
            }
            long firstEnd = Math.min(last(callsAt.get("heavy")), last(callsAt.get("light")));
            long bothFrom = Math.max(first(callsAt.get("heavy")), first(callsAt.get("light")));
            long heavy = callsAt.get("heavy").stream().filter(at -> at >= bothFrom && at <= firstEnd).count();
            long light = callsAt.get("light").stream().filter(at -> at >= bothFrom && at <= firstEnd).count();
            double both = (firstEnd - bothFrom) / 1e9;
            String alone = last(callsAt.get("heavy")) > last(callsAt.get("light")) ? "heavy" : "light";
            long aloneFrom = firstEnd;
            long aloneEnd = last(callsAt.get(alone));
            long aloneCalls = callsAt.get(alone).stream().filter(at -> at > aloneFrom).count();
            double capacity = concurrency * 1000.0 / callMs;
            System.out.printf("%nW12 weighted share: tenants heavy (weight 3) and light (weight 1), %d items each, handler concurrency %d,"
                    + " %d ms calls (%.0f calls/s at the limit)%n", items, concurrency, callMs, capacity);
            System.out.printf("  both backlogged (%.1f s): heavy %d calls, light %d: ratio %.2f (goal 3 +- 15 %%: 2.55 - 3.45); %.0f %% of the limit used%n",
                    both, heavy, light, (double) heavy / Math.max(1, light), 100 * (heavy + light) / both / capacity);
            System.out.printf("  %s alone afterwards (%.1f s): %.0f calls/s, %.0f %% of the limit (work conserving)%n", alone,
                    (aloneEnd - aloneFrom) / 1e9, aloneCalls / Math.max(1e-9, (aloneEnd - aloneFrom) / 1e9),
                    100 * aloneCalls / Math.max(1e-9, (aloneEnd - aloneFrom) / 1e9) / capacity);
            System.out.printf("  deferrals per item %.2f (re-sends to the item tiers); SQS %.3f requests per item %s%n",
                    used.deferrals() / (2.0 * items), used.sqsTotal() / (2.0 * items), used.sqsByOperation());
        }
    }

    private static long first(List<Long> times) {
        return times.stream().mapToLong(Long::longValue).min().orElse(0);
    }

    private static long last(List<Long> times) {
        return times.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    private static String handlerView(BenchStack stack, String integrationKey, String handlerKey) {
        for (JsonNode handler : stack.call("GET", "/handlers", null, 200).path("handlers")) {
            if (handler.path("integrationKey").asText().equals(integrationKey) && handler.path("handlerKey").asText().equals(handlerKey)) {
                return Json.write(handler);
            }
        }
        return "(not listed)";
    }

    /** A partner's answers after the learning part: calls served per second, and the share of calls refused. */
    private record Share(double servedPerSecond, double refusedShare) {

        /** Of one tenant's answers, or of all when {@code tenant} is null. */
        static Share of(List<LimitedPartner.Answer> answers, long startNanos, String tenant) {
            long from = startNanos + LEARNING.toNanos();
            List<LimitedPartner.Answer> measured = answers.stream()
                    .filter(a -> a.atNanos() >= from && (tenant == null || a.tenantId().equals(tenant))).toList();
            long served = measured.stream().filter(LimitedPartner.Answer::served).count();
            long until = measured.stream().filter(LimitedPartner.Answer::served).mapToLong(LimitedPartner.Answer::atNanos).max().orElse(from);
            double seconds = Math.max(1e-9, (until - from) / 1e9);
            return new Share(served / seconds, measured.isEmpty() ? 0 : (double) (measured.size() - served) / measured.size());
        }
    }
}
