package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-record ordering and coalescing (issue 31 items 2 and 3) through the functions on real Postgres, SQS and Redis:
 * a burst of updates of one record becomes one call with the latest payload, the others ending superseded and naming
 * it; an update arriving while the record's earlier item is in flight waits, spending no attempt, and goes once that
 * one ends; two workers keep every record in order; a survivor that fails carries the record's latest update to the DLQ.
 */
class RecordsIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_MAX_ATTEMPTS", "2"));

    @Test
    void tenUpdatesOfOneContactWithinTheWindowAreOneCallWithTheLatest() {
        var integration = fixture.integration(false, configs().put("coalesce_ms", 2_000).put("ordered_by_record", true));
        List<UUID> runs = new ArrayList<>();
        for (int n = 0; n < 10; n++) {
            runs.add(UUID.fromString(accepted(fixture.webhook(fixture.webhookEvent(integration, update("contact-28", n)))).path("runId").asText()));
        }

        runs.forEach(run -> fixture.awaitRun(run, RunStatus.COMPLETED, Duration.ofSeconds(30)));
        assertEquals(List.of(9), processedNs(integration), "one call, carrying the tenth update");
        List<Row> rows = rows(integration, "contact-28");
        Row survivor = rows.getFirst();
        assertEquals("succeeded", survivor.status());
        assertEquals(1, survivor.attempts());
        rows.subList(1, rows.size()).forEach(row -> {
            assertEquals("superseded", row.status(), "each later update ends in a status of its own");
            assertEquals(survivor.itemId(), row.supersededBy(), "naming the item whose call carried it");
            assertEquals(0, row.attempts());
        });
        JsonNode items = Json.parse(fixture.api("GET", "/runs/" + runs.get(3) + "/items", null).body());
        assertEquals("superseded", items.path("items").path(0).path("status").asText(), items.toString());
        assertEquals(survivor.itemId().toString(), items.path("items").path(0).path("supersededBy").asText(), items.toString());
        JsonNode run = Json.parse(fixture.api("GET", "/runs/" + runs.get(3), null).body());
        assertEquals(1, run.path("counts").path("superseded").asInt(), run.toString());
    }

    @Test
    void anUpdateArrivingWhileTheEarlierIsInFlightWaitsWithoutAnAttemptAndGoesAfter() throws Exception {
        var integration = fixture.integration(false, configs().put("ordered_by_record", true).put("rate_limit_per_minute", 600));
        CountDownLatch release = new CountDownLatch(1);
        try (var secondWorker = firstUpdateInFlight(integration, "deal-7", release)) {
            accepted(fixture.webhook(fixture.webhookEvent(integration, update("deal-7", 1))));

            await().atMost(Duration.ofSeconds(30)).until(() -> rows(integration, "deal-7").get(1).waitingSince() != null);
            Row waiting = rows(integration, "deal-7").get(1);
            assertEquals("queued", waiting.status());
            assertEquals(0, waiting.attempts(), "waiting spends no attempt");
            assertEquals(List.of(0), processedNs(integration), "not called while the earlier one is in flight");

            release.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> processedNs(integration).size() == 2);
            assertEquals(List.of(0, 1), processedNs(integration));
            await().atMost(Duration.ofSeconds(10)).until(() -> "succeeded".equals(rows(integration, "deal-7").get(1).status()));
            assertEquals(1, rows(integration, "deal-7").get(1).attempts());
            assertNull(rows(integration, "deal-7").get(1).waitingSince());
            assertEquals(2, rateUsedLastMinute(integration), "two calls count twice against the handler's rate, the wait not at all");
        } finally {
            release.countDown();
        }
    }

    @Test
    void updatesArrivingWhileTheEarlierIsInFlightCoalesceIntoTheOneThatWaits() throws Exception {
        var integration = fixture.integration(false, configs().put("ordered_by_record", true).put("coalesce_ms", 100));
        CountDownLatch release = new CountDownLatch(1);
        try (var secondWorker = firstUpdateInFlight(integration, "lead-3", release)) {
            accepted(fixture.webhook(fixture.webhookEvent(integration, update("lead-3", 1))));
            // The second waits behind the first (held by its claim, or still in its window); the later ones join it.
            await().atMost(Duration.ofSeconds(30)).until(() -> rows(integration, "lead-3").get(1).waitingSince() != null);
            for (int n = 2; n < 6; n++) {
                accepted(fixture.webhook(fixture.webhookEvent(integration, update("lead-3", n))));
            }
            release.countDown();

            await().atMost(Duration.ofSeconds(30)).until(() -> processedNs(integration).size() == 2);
            assertEquals(List.of(0, 5), processedNs(integration), "the one that waited carries the latest update");
            List<Row> rows = rows(integration, "lead-3");
            assertEquals(4, rows.stream().filter(r -> "superseded".equals(r.status()) && rows.get(1).itemId().equals(r.supersededBy())).count(),
                    rows.toString());
        } finally {
            release.countDown();
        }
    }

    @Test
    void twoWorkersCallEveryRecordInAcceptedOrder() {
        var integration = fixture.integration(false, configs().put("ordered_by_record", true));
        Map<String, Integer> last = new ConcurrentHashMap<>();
        Set<String> inFlight = ConcurrentHashMap.newKeySet();
        AtomicInteger outOfOrder = new AtomicInteger();
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> {
            String record = item.path("externalId").asText();
            int n = item.path("payload").path("n").asInt();
            if (!inFlight.add(record)) {
                outOfOrder.incrementAndGet(); // two updates of one record at once
            }
            Integer before = last.put(record, n);
            if (before != null && before >= n) {
                outOfOrder.incrementAndGet();
            }
            sleepQuietly(); // a call long enough for the other worker to meet the record in flight
            inFlight.remove(record);
            return 200;
        });
        int records = 8;
        int updates = 6;
        try (var secondWorker = new EventSourcePump(fixture.stack, fixture.runner)) {
            for (int n = 0; n < updates; n++) {
                StringBuilder body = new StringBuilder("[");
                for (int r = 0; r < records; r++) {
                    body.append(r == 0 ? "" : ",").append(update("rec-" + r, n));
                }
                accepted(fixture.webhook(fixture.webhookEvent(integration, body.append("]").toString())));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> processedNs(integration).size() == records * updates);
        }
        assertEquals(0, outOfOrder.get(), "out-of-order or overlapping calls of a record");
        for (int r = 0; r < records; r++) {
            assertEquals(updates - 1, last.get("rec-" + r));
        }
    }

    @Test
    void aSurvivorThatFailsTakesTheLatestUpdateToTheDlqAndTheSupersededKeepNamingIt() {
        var integration = fixture.integration(false, configs().put("ordered_by_record", true).put("coalesce_ms", 1_000));
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 503);
        List<UUID> runs = new ArrayList<>();
        for (int n = 0; n < 3; n++) {
            runs.add(UUID.fromString(accepted(fixture.webhook(fixture.webhookEvent(integration, update("acct-9", n)))).path("runId").asText()));
        }
        fixture.awaitRun(runs.getFirst(), RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));
        List<Row> rows = rows(integration, "acct-9");
        Row survivor = rows.getFirst();
        assertEquals("dead", survivor.status());
        assertEquals(2, survivor.attempts(), "retries apply to the survivor");
        assertEquals(2, processedNs(integration).size());
        assertEquals(Set.of(2), Set.copyOf(processedNs(integration)), "every attempt carried the latest update");
        rows.subList(1, rows.size()).forEach(row -> {
            assertEquals("superseded", row.status());
            assertEquals(survivor.itemId(), row.supersededBy());
        });
        fixture.awaitRun(runs.get(2), RunStatus.COMPLETED, Duration.ofSeconds(5));

        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 200);
        accepted(fixture.webhook(fixture.webhookEvent(integration, update("acct-9", 3))));
        await().atMost(Duration.ofSeconds(30)).until(() -> processedNs(integration).contains(3));
        assertEquals(202, fixture.api("POST", "/items/" + survivor.itemId() + "/redrive", Json.object()).status());
        await().atMost(Duration.ofSeconds(30)).until(() -> "succeeded".equals(rows(integration, "acct-9").getFirst().status()));
        assertEquals(List.of(2, 2, 3, 2), processedNs(integration), "a later update is a call of its own; the redrive carries the survivor's");
    }

    /** Ingest messages are coalesced as webhooks are: a batch's updates of one record are one call with the latest. */
    @Test
    void anIngestBatchsUpdatesOfOneRecordAreOneCallWithTheLatest() {
        var integration = fixture.integration(false, configs().put("coalesce_ms", 200));
        List<SQSEvent.SQSMessage> messages = new ArrayList<>();
        for (int n = 0; n < 4; n++) {
            String body = Json.write(Json.object().put("tenantId", integration.tenantId()).put("integrationKey", integration.integrationKey())
                    .put("handlerKey", integration.handlerKey()).put("externalId", "ing-1").set("payload", Json.object().put("n", n)));
            String messageId = UUID.randomUUID().toString();
            messages.add(Lambda.sqsRecord(messageId, "rh-" + messageId, body, fixture.stack.arn("ingest"),
                    Map.of("ApproximateReceiveCount", "1", "SentTimestamp", Long.toString(System.currentTimeMillis())),
                    StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + messageId, Instant.now().getEpochSecond(),
                            body.getBytes(StandardCharsets.UTF_8))));
        }
        var response = Lambda.sqs(new IngestFunction(fixture.runner), Lambda.sqsEvent(messages), TestContext.of("ingest", 30_000));
        assertTrue(response.getBatchItemFailures().isEmpty());

        // The survivor is the batch's first update in accepted order, which item ids of one millisecond need not follow.
        await().atMost(Duration.ofSeconds(30)).until(() -> rows(integration, "ing-1").stream().anyMatch(row -> "succeeded".equals(row.status())));
        assertEquals(List.of(3), processedNs(integration));
        assertEquals(3, rows(integration, "ing-1").stream().filter(row -> "superseded".equals(row.status())).count());
    }

    // ------------------------------------------------------------------ helpers

    /**
     * Update 0 of {@code record} sent and held in flight at the handler until {@code release}; returns a second worker,
     * so that a later update meets the record with its first in flight.
     */
    private static EventSourcePump firstUpdateInFlight(PipelineFixture.Integration integration, String record, CountDownLatch release)
            throws InterruptedException {
        CountDownLatch firstCalled = new CountDownLatch(1);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> {
            if (item.path("payload").path("n").asInt() == 0) {
                firstCalled.countDown();
                awaitQuietly(release);
            }
            return 200;
        });
        var secondWorker = new EventSourcePump(fixture.stack, fixture.runner);
        accepted(fixture.webhook(fixture.webhookEvent(integration, update(record, 0))));
        assertTrue(firstCalled.await(30, TimeUnit.SECONDS), "the first update is in flight");
        return secondWorker;
    }

    private static ObjectNode configs() {
        return Json.object().put("batch_size", 10);
    }

    private static String update(String record, int n) {
        return "{\"externalId\":\"" + record + "\",\"n\":" + n + "}";
    }

    private record Row(UUID itemId, String status, int attempts, UUID supersededBy, java.time.Instant waitingSince) {}

    /** The record's items in accepted order. */
    private static List<Row> rows(PipelineFixture.Integration integration, String externalId) {
        return fixture.runner.database().query("""
                select item_id, status, attempts, superseded_by, record_wait_since from execution_items
                where tenant_id = ? and external_id = ? order by item_id
                """, row -> new Row(row.getObject(1, UUID.class), row.getString(2), row.getInt(3), row.getObject(4, UUID.class),
                row.getTimestamp(5) == null ? null : row.getTimestamp(5).toInstant()), integration.tenantId(), externalId);
    }

    /** The handler's rate use over the last minute, as GET /handlers tells it. */
    private static int rateUsedLastMinute(PipelineFixture.Integration integration) {
        for (JsonNode handler : Json.parse(fixture.api("GET", "/handlers", null).body()).path("handlers")) {
            if (handler.path("integrationKey").asText().equals(integration.integrationKey())
                    && handler.path("handlerKey").asText().equals(integration.handlerKey())) {
                return handler.path("rate").path("usedLastMinute").asInt();
            }
        }
        throw new AssertionError("handler not listed");
    }

    /** The n of each payload the handler was called with, in call order. */
    private static List<Integer> processedNs(PipelineFixture.Integration integration) {
        return fixture.handlers.itemCalls(integration.handlerKey()).stream().flatMap(call -> FakeHandler.items(call).stream())
                .map(item -> item.path("payload").path("n").asInt()).toList();
    }

    private static JsonNode accepted(APIGatewayV2HTTPResponse response) {
        assertEquals(202, response.getStatusCode(), response.getBody());
        return Json.parse(response.getBody());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
