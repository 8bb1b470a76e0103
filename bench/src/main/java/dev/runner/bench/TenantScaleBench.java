package dev.runner.bench;

import com.github.benmanes.caffeine.cache.stats.CacheStats;
import dev.runner.cache.Caches;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * W9, many tenants: {@code -Dw9.items} (200,000) items from each tenant count of {@code -Dw9.tenants} (1000,100000),
 * each on a fresh local runtime, half through signed webhooks and half through signed messages on the
 * ingest queue, the tenants taken in turn (tenant 0, 1, … n−1, 0, …), so a batch mixes as many tenants at every
 * count and only the count of tenants differs. Prints, per tenant count, what an item cost (statements, Redis
 * commands, SQS requests, CPU by function: {@link CostReport}), Redis's keys and memory per tenant, and the hit rates
 * of the in-process caches ({@link Caches#statistics()}). The tenant integrations are written with one statement
 * (100,000 PUTs through the API would be the setup's whole time); the API and its caches see them as any others.
 */
final class TenantScaleBench {

    private static final String SECRET = "w9-secret-0123456789";
    /** Concurrent webhook posts and ingest sends: enough to keep the functions busy on 2 cores. */
    private static final int SENDERS = Integer.getInteger("w9.senders", 16);

    private TenantScaleBench() {}

    /** {@code -Dw9.tenants}: tenant counts, each optionally with its own item count ({@code 1000:20000,100000:100000}). */
    static void tenants() {
        int items = Integer.getInteger("w9.items", 200_000);
        for (String count : System.getProperty("w9.tenants", "1000,100000").split(",")) {
            String[] parts = count.trim().split(":");
            run(Integer.parseInt(parts[0]), parts.length > 1 ? Integer.parseInt(parts[1]) : items);
        }
    }

    private static void run(int tenants, int items) {
        try (var stack = new BenchStack(Map.of());
             var sqs = SqsClient.builder()
                     .endpointOverride(URI.create(stack.runtime.endpoints().sqsEndpoint()))
                     .region(Region.US_EAST_1)
                     .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
                     .httpClient(UrlConnectionHttpClient.create())
                     .build()) {
            stack.integration("w9", "sync", true, Json.object().put("batch_size", 10), List.of(), SECRET);
            stack.tenantIntegrations("w9-tenant-", tenants, "w9", SECRET);
            String ingestQueue = stack.runtime.queueUrls().get("IngestQueue");
            var redisBefore = stack.redisSize();
            Map<String, CacheStats> cachesBefore = Caches.statistics();
            var before = stack.meters();
            long started = System.nanoTime();
            AtomicLong producerRequests = new AtomicLong();
            ExecutorService senders = Executors.newFixedThreadPool(SENDERS);
            List<Future<?>> sent = new ArrayList<>();
            // Item i is tenant i mod n's, in pass p = i div n; it goes through a webhook when i + p is even, else the ingest
            // queue: a tenant with one item per pass alternates between the two, and at any count half go each way.
            for (int from = 0; from < items; from += 20) {
                List<Integer> queued = new ArrayList<>();
                for (int i = from; i < Math.min(items, from + 20); i++) {
                    int item = i;
                    if ((i + i / tenants) % 2 == 0) {
                        sent.add(senders.submit(() -> webhook(stack, tenants, item)));
                    } else {
                        queued.add(i);
                    }
                }
                // At a pass's boundary two items in a row go the same way: a block may hold 11 for the queue, a batch 10.
                for (int batch = 0; batch < queued.size(); batch += 10) {
                    List<Integer> entries = queued.subList(batch, Math.min(queued.size(), batch + 10));
                    sent.add(senders.submit(() -> {
                        ingest(sqs, ingestQueue, tenants, entries);
                        producerRequests.incrementAndGet();
                    }));
                }
            }
            for (Future<?> future : sent) {
                try {
                    future.get();
                } catch (Exception e) {
                    throw new IllegalStateException("a producer failed: " + e, e);
                }
            }
            senders.shutdown();
            double sendSeconds = (System.nanoTime() - started) / 1e9;
            long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
            long succeeded;
            while ((succeeded = stack.succeededItems()) < items) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(succeeded + " of " + items + " items succeeded within 20 minutes");
                }
                LockSupport.parkNanos(500_000_000);
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            var used = stack.meters().since(before);
            var redisAfter = stack.redisSize();
            Map<String, CacheStats> cachesAfter = Caches.statistics();
            long runs = stack.runCount();

            System.out.printf("%nW9 tenants: %,d items from %,d tenants (%.1f each), half signed webhooks, half signed ingest messages;"
                    + " all succeeded in %.1f s = %.0f items/s (sent in %.1f s by %d senders)%n", items, tenants, (double) items / tenants,
                    seconds, items / seconds, sendSeconds, SENDERS);
            System.out.printf("  per item: Postgres %.3f statements (%.3f with BEGIN/COMMIT), Redis %.2f commands server-side (%.3f round trips"
                            + " by the functions), SQS %.3f requests by Runner (%s; the producers' own %,d SendMessageBatch left out), runs %.3f%n",
                    (double) used.postgres().work() / items, (double) used.postgres().all() / items, (double) used.redisCommands() / items,
                    (double) used.redisRoundTrips() / items, (double) (used.sqsTotal() - producerRequests.get()) / items,
                    used.sqsByOperation(), producerRequests.get(), (double) runs / items);
            System.out.printf("  Postgres WAL %.0f bytes/item%n", (double) used.wal().bytes() / items);
            System.out.printf("  Redis: keys %,d -> %,d (%.2f per tenant), used_memory %.1f -> %.1f MB (%.0f bytes per tenant)%n",
                    redisBefore.keys(), redisAfter.keys(), (double) (redisAfter.keys() - redisBefore.keys()) / tenants,
                    redisBefore.usedBytes() / 1e6, redisAfter.usedBytes() / 1e6,
                    (double) (redisAfter.usedBytes() - redisBefore.usedBytes()) / tenants);
            stack.redisKeyShapes().forEach((shape, counts) ->
                    System.out.printf("    %-60s %,9d keys, %,9d with a TTL%n", shape, counts[0], counts[1]));
            System.out.println("  in-process caches over the workload (all function instances together; Integrations: parsed types,"
                    + " .found/.absent: tenant integrations, 5 s): hits / misses, hit rate, evictions (expiries included)");
            cachesAfter.forEach((name, after) -> {
                CacheStats delta = after.minus(cachesBefore.getOrDefault(name, CacheStats.empty()));
                if (delta.requestCount() > 0) {
                    System.out.printf("    %-28s %,10d / %,9d  %5.1f %%  %,d%n", name, delta.hitCount(), delta.missCount(),
                            100 * delta.hitRate(), delta.evictionCount());
                }
            });
            CostReport.print(items, used);
        }
    }

    private static String externalId(int item) {
        return "w9-item-" + item;
    }

    private static void webhook(BenchStack stack, int tenants, int item) {
        byte[] body = ("{\"externalId\":\"" + externalId(item) + "\"}").getBytes(StandardCharsets.UTF_8);
        Map<String, String> headers = new HashMap<>(StandardWebhooks.headers(List.of(SECRET), "msg_w9_" + item,
                Instant.now().getEpochSecond(), body));
        headers.put("Content-Type", "application/json");
        int status = stack.post("/webhooks/w9-tenant-" + item % tenants + "/w9/sync", body, headers);
        if (status != 202) {
            throw new IllegalStateException("webhook answered " + status);
        }
    }

    /** One SendMessageBatch of the items (at most 10), each signed as its tenant's producer signs it. */
    private static void ingest(SqsClient sqs, String queueUrl, int tenants, List<Integer> items) {
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int item : items) {
            String body = Json.write(Json.object().put("tenantId", "w9-tenant-" + item % tenants).put("integrationKey", "w9")
                    .put("handlerKey", "sync").put("externalId", externalId(item)).set("payload", Json.object().put("n", item)));
            Map<String, MessageAttributeValue> attributes = new HashMap<>();
            StandardWebhooks.headers(List.of(SECRET), "msg_w9_" + item, Instant.now().getEpochSecond(), body.getBytes(StandardCharsets.UTF_8))
                    .forEach((name, value) -> attributes.put(name, MessageAttributeValue.builder().dataType("String").stringValue(value).build()));
            entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(entries.size())).messageBody(body)
                    .messageAttributes(attributes).build());
        }
        var answer = sqs.sendMessageBatch(b -> b.queueUrl(queueUrl).entries(entries));
        if (!answer.failed().isEmpty()) {
            throw new IllegalStateException("ingest send failed: " + answer.failed());
        }
    }
}
