package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * W10, the webhook storm (BENCH.md): {@code -Dw10.webhooks} (5,000) Standard-Webhooks-signed webhooks of one item
 * each from {@code -Dw10.tenants} (1,000) tenants, {@code -Dw10.inFlight} (32) at once, through the local runtime's
 * HTTP API, as the reference's driver sends them (bench/README.md, W10: the same body, a
 * one-element array, and the tenants taken in turn). Each webhook is its own invocation of WebhookFunction, one at a
 * time per execution environment, as in AWS. Prints accepted/s, accept latency, webhook → handler latency (from the
 * send, as the reference measures it), what each item cost at the servers (Postgres statements, transactions and CPU;
 * Redis commands) and the bill per million event items ({@link CostReport}).
 */
final class WebhookStormBench {

    private static final String SECRET = "bench-secret-0123456789";
    /** BENCH.md's W10 for the reference, two runs on a quiet machine. */
    private static final String REFERENCE = "reference (BENCH.md, two runs): 545 and 672 accepted/s, accept p50/p99 51/165 and 37/209 ms,"
            + " webhook -> handler p99 400 and 449 ms, 1.05 Postgres statements and 0.65-0.85 ms of its CPU per item";

    private WebhookStormBench() {}

    static void storm() {
        int webhooks = Integer.getInteger("w10.webhooks", 5_000);
        int tenants = Integer.getInteger("w10.tenants", 1_000);
        int inFlight = Integer.getInteger("w10.inFlight", 32);
        int warmup = Integer.getInteger("w10.warmup", 1_000);
        Map<String, String> env = new HashMap<>();
        // -Dw10.env=NAME=VALUE,…: variables for every function (an experiment: RUNNER_DATABASE_POOL_SIZE=16, say).
        for (String pair : System.getProperty("w10.env", "").split(",")) {
            if (pair.contains("=")) {
                env.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            }
        }
        try (var stack = new BenchStack(env)) {
            stack.integration("w10", "orders", true, Json.object().put("batch_size", 10), List.of(), SECRET);
            stack.tenantIntegrations("w10-tenant-", tenants, "w10", SECRET);
            if (warmup > 0) {
                // The webhook path's classes and JIT, the Redis scripts, the connections: not measured.
                Storm warm = Storm.send(stack, "w10warm", warmup, tenants, inFlight);
                warm.awaitHandled(stack, Duration.ofMinutes(5));
            }
            var before = stack.meters();
            Storm storm = Storm.send(stack, "w10", webhooks, tenants, inFlight);
            Handled handled = storm.awaitHandled(stack, Duration.ofMinutes(10));
            List<Double> toHandler = new ArrayList<>(handled.millisFromSend());
            var used = stack.meters().since(before);
            List<Double> accept = new ArrayList<>(storm.acceptMillis());
            accept.sort(Double::compare);
            toHandler.sort(Double::compare);
            int accepted = storm.accepted();
            System.out.printf("%nW10 webhook storm: %,d signed webhooks of one item from %,d tenants, %d in flight (Postgres durable: %s)%n",
                    webhooks, tenants, inFlight, System.getProperty("bench.pgDurable", "true"));
            System.out.printf("  accepted %,d (%d refused) in %.2f s = %.0f accepted/s; accept p50 %.1f ms, p99 %.1f ms%n",
                    accepted, storm.refused(), storm.seconds(), accepted / storm.seconds(), percentile(accept, 50), percentile(accept, 99));
            System.out.printf("  webhook -> handler answered (from the send): p50 %.1f ms, p99 %.1f ms; all handled %.2f s after the first send"
                            + " = %.0f items/s end to end%n", percentile(toHandler, 50), percentile(toHandler, 99),
                    storm.secondsUntil(handled.lastNanos()), accepted / storm.secondsUntil(handled.lastNanos()));
            System.out.printf("  per item: Postgres %.3f statements (pg_stat_statements, top level), %.3f transactions (pg_stat_database),"
                            + " %.3f ms of its CPU; Redis %.2f commands server-side (%.3f round trips by the functions); SQS %.3f requests %s%n",
                    (double) used.postgres().work() / accepted, (double) used.postgres().transactions() / accepted,
                    CostReport.prefixed(used.cpu().byProcess(), "postgres") / 1e6 / accepted, (double) used.redisCommands() / accepted,
                    (double) used.redisRoundTrips() / accepted, (double) used.sqsTotal() / accepted, used.sqsByOperation());
            System.out.println("  " + REFERENCE);
            CostReport.print(accepted, used);
            if (Integer.getInteger("bench.pgTop", 0) > 0) {
                System.out.print(stack.topStatements(Integer.getInteger("bench.pgTop")));
            }
        }
    }

    /** One storm: {@code n} webhooks, {@code inFlight} senders, tenants in turn; each webhook's send time by externalId. */
    private record Storm(String tag, long startedNanos, long endedNanos, Map<String, Long> sentAt, List<Double> acceptMillis,
                         AtomicInteger refusedCount) {

        static Storm send(BenchStack stack, String tag, int n, int tenants, int inFlight) {
            Map<String, Long> sentAt = new ConcurrentHashMap<>();
            List<Double> acceptMillis = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger next = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            long started = System.nanoTime();
            ExecutorService senders = Executors.newFixedThreadPool(inFlight);
            List<Future<?>> lanes = new ArrayList<>();
            for (int lane = 0; lane < inFlight; lane++) {
                lanes.add(senders.submit(() -> {
                    for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                        String externalId = tag + "-" + i;
                        byte[] body = Json.write(Json.array().add(Json.object().put("externalId", externalId)
                                .put("event", "contact.updated").put("n", i))).getBytes(StandardCharsets.UTF_8);
                        Map<String, String> headers = new HashMap<>(StandardWebhooks.headers(List.of(SECRET), "msg_" + tag + "_" + i,
                                Instant.now().getEpochSecond(), body));
                        headers.put("Content-Type", "application/json");
                        long sent = System.nanoTime();
                        sentAt.put(externalId, sent);
                        int status = stack.post("/webhooks/w10-tenant-" + i % tenants + "/w10/orders", body, headers);
                        if (status == 202) {
                            acceptMillis.add((System.nanoTime() - sent) / 1e6);
                        } else {
                            sentAt.remove(externalId);
                            refused.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> lane : lanes) {
                try {
                    lane.get();
                } catch (Exception e) {
                    throw new IllegalStateException("a sender failed: " + e, e);
                }
            }
            senders.shutdown();
            return new Storm(tag, started, System.nanoTime(), sentAt, acceptMillis, refused);
        }

        int accepted() {
            return acceptMillis.size();
        }

        int refused() {
            return refusedCount.get();
        }

        double seconds() {
            return (endedNanos - startedNanos) / 1e9;
        }

        /** Waits until the handler has had every accepted item: each one's time from its send to its first call. */
        Handled awaitHandled(BenchStack stack, Duration within) {
            long deadline = System.nanoTime() + within.toNanos();
            Map<String, Long> firstCall = new HashMap<>();
            int seen = 0;
            while (true) {
                List<FakeHandler.Call> calls = stack.handlers.itemCalls("orders");
                for (int c = seen; c < calls.size(); c++) {
                    FakeHandler.Call call = calls.get(c);
                    for (JsonNode item : FakeHandler.items(call)) {
                        String externalId = item.path("externalId").asText();
                        if (sentAt.containsKey(externalId)) {
                            firstCall.merge(externalId, call.receivedAtNanos(), Math::min);
                        }
                    }
                }
                seen = calls.size();
                if (firstCall.size() >= sentAt.size()) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(firstCall.size() + " of " + sentAt.size() + " webhooks handled within " + within);
                }
                LockSupport.parkNanos(20_000_000);
            }
            List<Double> latencies = new ArrayList<>();
            firstCall.forEach((externalId, at) -> latencies.add((at - sentAt.get(externalId)) / 1e6));
            return new Handled(latencies, firstCall.values().stream().mapToLong(Long::longValue).max().orElse(startedNanos));
        }

        double secondsUntil(long nanoTime) {
            return (nanoTime - startedNanos) / 1e9;
        }
    }

    /** Every webhook's time from its send to the handler's first call for it, and when the last came. */
    private record Handled(List<Double> millisFromSend, long lastNanos) {}

    static double percentile(List<Double> sorted, int p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }
}
