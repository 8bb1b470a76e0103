package dev.runner.bench;

import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * W13, record bursts (BENCH.md): {@code -Dw13.updates} (10,000) updates of {@code -Dw13.records} (500) records
 * (one contact each, over {@code -Dw13.tenants} (10) tenants) arriving in bursts of {@code -Dw13.burst} (5)
 * updates of each record, {@code -Dw13.pauseMs} (twice the window) apart, as signed webhooks through the local
 * runtime's HTTP API, {@code -Dw13.inFlight} (16) at once, each record's updates sent in order. The handler has
 * {@code ordered_by_record: true} and {@code coalesce_ms} {@code -Dw13.coalesceMs} (2,000), and checks every call:
 * a record called while it has a call in flight, or with an update earlier than one it saw, is out of order. Prints handler calls per update and per record per burst, the out-of-order count (must be 0), the items
 * superseded, and what each accepted update cost at the servers (Postgres statements, Redis round trips, SQS
 * requests) with the bill ({@link CostReport}).
 */
final class RecordBurstBench {

    private static final String SECRET = "bench-secret-0123456789";

    private RecordBurstBench() {}

    static void bursts() {
        int updates = Integer.getInteger("w13.updates", 10_000);
        int records = Integer.getInteger("w13.records", 500);
        int burst = Integer.getInteger("w13.burst", 5);
        int tenants = Integer.getInteger("w13.tenants", 10);
        int inFlight = Integer.getInteger("w13.inFlight", 16);
        int coalesceMs = Integer.getInteger("w13.coalesceMs", 2_000);
        long pauseMs = Long.getLong("w13.pauseMs", 2L * coalesceMs);
        int rounds = Math.max(1, updates / (records * burst));
        try (var stack = new BenchStack(Map.of())) {
            stack.integration("w13", "contacts", true, Json.object().put("batch_size", 10).put("ordered_by_record", true)
                    .put("coalesce_ms", coalesceMs), List.of(), SECRET);
            stack.tenantIntegrations("w13-tenant-", tenants, "w13", SECRET);
            OrderCheck check = new OrderCheck();
            stack.handlers.handler("contacts").itemStatus(check::call);

            var before = stack.meters();
            long started = System.nanoTime();
            int accepted = 0;
            for (int round = 0; round < rounds; round++) {
                if (round > 0) {
                    LockSupport.parkNanos(Duration.ofMillis(pauseMs).toNanos());
                }
                accepted += sendBurst(stack, round, records, burst, tenants, inFlight);
            }
            long sent = System.nanoTime();
            long ended = awaitEnded(stack, accepted, Duration.ofMinutes(10));
            var used = stack.meters().since(before);
            long superseded = stack.items("w13", "superseded");
            long calls = check.calls.get();
            System.out.printf("%nW13 record bursts: %,d updates of %,d records over %d tenants, %d bursts of %d updates per record %d ms apart,"
                            + " ordered_by_record and coalesce_ms %d (Postgres durable: %s)%n", rounds * records * burst, records, tenants,
                    rounds, burst, pauseMs, coalesceMs, System.getProperty("bench.pgDurable", "true"));
            System.out.printf("  accepted %,d in %.2f s; every update called or superseded %.2f s after the first send%n", accepted,
                    (sent - started) / 1e9, (ended - started) / 1e9);
            System.out.printf("  handler: %,d item calls (%,d HTTP calls) = %.3f calls per update, %.3f per record per burst;"
                            + " %,d superseded; out of order: %d (must be 0)%n", calls, check.httpCalls(stack), (double) calls / accepted,
                    (double) calls / ((long) records * rounds), superseded, check.outOfOrder.get());
            System.out.printf("  per accepted update: Postgres %.3f statements (pg_stat_statements, top level), %.3f transactions;"
                            + " Redis %.3f round trips by the functions (%.2f commands server-side); SQS %.3f requests %s%n",
                    (double) used.postgres().work() / accepted, (double) used.postgres().transactions() / accepted,
                    (double) used.redisRoundTrips() / accepted, (double) used.redisCommands() / accepted,
                    (double) used.sqsTotal() / accepted, used.sqsByOperation());
            CostReport.print(accepted, used);
        }
    }

    /** One burst: {@code burst} updates of every record, each record's in order by one sender; returns how many were accepted. */
    private static int sendBurst(BenchStack stack, int round, int records, int burst, int tenants, int inFlight) {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger accepted = new AtomicInteger();
        BenchStack.lanes(inFlight, () -> {
            for (int r = next.getAndIncrement(); r < records; r = next.getAndIncrement()) {
                for (int k = 0; k < burst; k++) {
                    int n = round * burst + k;
                    byte[] body = Json.write(Json.object().put("externalId", "contact-" + r).put("event", "contact.updated").put("n", n))
                            .getBytes(StandardCharsets.UTF_8);
                    Map<String, String> headers = new HashMap<>(StandardWebhooks.headers(List.of(SECRET), "msg_w13_" + r + "_" + n,
                            Instant.now().getEpochSecond(), body));
                    headers.put("Content-Type", "application/json");
                    if (stack.post("/webhooks/w13-tenant-" + r % tenants + "/w13/contacts", body, headers) != 202) {
                        throw new IllegalStateException("update " + n + " of contact-" + r + " refused");
                    }
                    accepted.incrementAndGet();
                }
            }
        });
        return accepted.get();
    }

    /** Waits until every accepted update has ended called (succeeded) or superseded; returns when. */
    private static long awaitEnded(BenchStack stack, int accepted, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            long ended = stack.items("w13", "succeeded") + stack.items("w13", "superseded");
            if (ended >= accepted) {
                return System.nanoTime();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(ended + " of " + accepted + " updates ended within " + within);
            }
            LockSupport.parkNanos(50_000_000);
        }
    }

    /** The handler's own check: one call of a record at a time, each with a later update than the last it saw. */
    private static final class OrderCheck {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger outOfOrder = new AtomicInteger();
        private final Map<String, Integer> last = new ConcurrentHashMap<>();
        private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

        int call(com.fasterxml.jackson.databind.JsonNode item) {
            calls.incrementAndGet();
            String record = item.path("tenantId").asText() + "/" + item.path("externalId").asText();
            int n = item.path("payload").path("n").asInt();
            if (!inFlight.add(record)) {
                outOfOrder.incrementAndGet();
            }
            Integer before = last.merge(record, n, Math::max);
            if (before != n) {
                outOfOrder.incrementAndGet(); // earlier than an update already called
            }
            inFlight.remove(record);
            return 200;
        }

        long httpCalls(BenchStack stack) {
            return stack.handlers.itemCalls("contacts").size();
        }
    }
}
