package dev.runner.bench;

import dev.runner.json.Json;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * W7 isolation (BENCH.md): (a) a tenant's webhooks behind its own manual backlog; (b) a tenant of
 * an integration whose calls all fail beside a healthy tenant of the same integration.
 */
final class IsolationBench {

    private IsolationBench() {}

    static void isolation() {
        ownBacklog();
        failingNeighbour();
    }

    /**
     * (a): webhook latency with the tenant's own manual backlog (6 × its limit) ÷ without, as a new user tries it: the
     * backlog and the webhooks go to two handlers of one integration, and the tenant has sent no webhook before (the
     * first ones come after a quiet spell). "Alone" is measured on a twin tenant, so the measured one is quiet until then.
     */
    static void ownBacklog() {
        int limit = Integer.getInteger("w7.limit", 1000);
        int backlog = Integer.getInteger("w7.backlog", 6 * limit);
        int webhooks = Integer.getInteger("w7.webhooks", 40);
        String tenant = "w7-tenant";
        String twin = "w7-twin";
        String secret = "w7-secret-0123456789";
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", Integer.toString(limit)))) {
            stack.integration("w7", "hook", true, Json.object().put("batch_size", 10), List.of(tenant, twin), secret);
            stack.call("PUT", "/types/w7", twoHandlers(stack), 200);
            stack.handlers.handler("bulk").pages(Math.max(1, backlog / 500), Math.min(500, backlog));
            Bench.webhookLatencies(stack, secret, webhooks / 2, "warm-up", twin, "w7", "hook");
            double[] alone = Bench.webhookLatencies(stack, secret, webhooks, "alone", twin, "w7", "hook");
            UUID run = stack.manualRun(tenant, "w7", "bulk");
            LockSupport.parkNanos(Duration.ofSeconds(3).toNanos());
            List<Double> inOrder = Bench.webhookLatenciesInOrder(stack, secret, webhooks, "with", tenant, "w7", "hook");
            List<Double> sorted = inOrder.stream().map(ms -> ms.isNaN() ? Double.MAX_VALUE : ms).sorted().toList();
            System.out.printf("%nW7a isolation: %d webhook items at 20/s of one tenant, limit %d/min, 3 s after its own %d-item manual run"
                    + " on another handler of the integration; the tenant's first webhooks%n", webhooks, limit, backlog);
            System.out.printf("  alone (a twin tenant): p50 %.0f ms, p95 %.0f ms, p99 %.0f ms%n", alone[0], alone[1], alone[2]);
            System.out.printf("  with own backlog:      first %s, p50 %s, p90 %s, p99 %s, last %s (%d of the backlog succeeded by then)%n",
                    ms(inOrder.getFirst()), ms(Bench.percentile(sorted, 50)), ms(Bench.percentile(sorted, 90)), ms(Bench.percentile(sorted, 99)),
                    ms(inOrder.getLast()), stack.count(run, "succeeded"));
            System.out.printf("  ratio: p50 %.2f, p99 %.2f (goal: p90 <= 3 s, the first ones included)%n",
                    Bench.percentile(sorted, 50) / alone[0], Bench.percentile(sorted, 99) / alone[2]);
            System.out.printf("  in the order sent, ms: %s%n", inOrder.stream().map(IsolationBench::ms).toList());
        }
    }

    private static String ms(double ms) {
        return ms == Double.MAX_VALUE || Double.isNaN(ms) ? "not within 2 min" : String.format("%.0f ms", ms);
    }

    /** W7a's type: a webhook handler and a bulk one (a manual run's), both batch handlers at the handler service. */
    private static com.fasterxml.jackson.databind.node.ObjectNode twoHandlers(BenchStack stack) {
        var type = Json.object().put("name", "w7");
        var handlers = type.putObject("handlers");
        for (String key : List.of("hook", "bulk")) {
            handlers.putObject(key).put("url", stack.handlers.url(key)).put("direction", "inbound").put("batch", true)
                    .set("configs", Json.object().put("batch_size", 10));
        }
        return type;
    }

    /** (b): tenant B's drain time beside tenant A, all of whose calls answer 503, ÷ B alone; one integration. */
    static void failingNeighbour() {
        int items = Integer.getInteger("w7.items", 1000);
        // The tenant limit out of the way: B's drain is the handler's and the breaker's business here.
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))) {
            stack.integration("w7b", "push", false, Json.object(), List.of("tenant-a", "tenant-b"), "w7-secret-0123456789");
            stack.handlers.handler("push").pages(Math.max(1, items / 500), Math.min(500, items))
                    .itemStatus(item -> item.path("tenantId").asText().equals("tenant-a") ? 503 : 200);
            stack.awaitEnded(List.of(stack.manualRun("tenant-b", "w7b", "push")), Duration.ofMinutes(3)); // warm-up
            long alone = drain(stack, "tenant-b");
            UUID failing = stack.manualRun("tenant-a", "w7b", "push");
            long beside = drain(stack, "tenant-b");
            System.out.printf("%nW7b isolation: one integration, tenant A's %d items all answered 503, tenant B's %d healthy%n", items, items);
            System.out.printf("  B alone %d ms, B beside failing A %d ms: %.2fx (goal <= 1.2); A so far: %d succeeded, %d dead%n",
                    alone, beside, (double) beside / alone, stack.count(failing, "succeeded"), stack.count(failing, "dead"));
            System.out.printf("  breaker: %s%n", stack.call("GET", "/breakers/w7b", null, 200));
        }
    }

    /** A manual run of the tenant's, from its request to its last item. */
    private static long drain(BenchStack stack, String tenant) {
        Instant start = Instant.now();
        UUID run = stack.manualRun(tenant, "w7b", "push");
        return Duration.between(start, stack.awaitEnded(List.of(run), Duration.ofMinutes(5))).toMillis();
    }
}
