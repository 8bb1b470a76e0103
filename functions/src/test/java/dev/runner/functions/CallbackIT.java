package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Callbacks end to end (docs/handler-contract.md, callbacks) on the real servers: a handler answers pending, the item
 * waits in its own status, and a POST to its callback URL (through WebhookFunction, as API Gateway would route it)
 * completes it as a synchronous answer; and the races and refusals: a callback before the handler's own 202, a
 * repeated one, a forged one, one after the timeout, a cancel of a waiting item.
 */
class CallbackIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of(
            "RUNNER_CALLBACK_BASE_URL", "https://callbacks.example",
            "RUNNER_CALLBACK_SECRET", "callback-key-for-tests-0123456789"));

    @Test
    void aPendingItemWaitsHoldingNoMessageAndItsCallbackCompletesTheRun() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(integration, "c-1");

        JsonNode item = awaitStatus(runId, ItemStatus.PENDING);
        assertEquals(RunStatus.RUNNING, fixture.runner.runStore().find(runId).orElseThrow().status(), "a pending item keeps its run open");
        JsonNode sent = onlyCall(integration.handlerKey());
        assertTrue(sent.path("callbackUrl").asText().startsWith("https://callbacks.example/callbacks/" + item.path("itemId").asText() + ".1."),
                "the item call carries the attempt's callback URL: " + sent);

        APIGatewayV2HTTPResponse answer = callback(sent.path("callbackUrl").asText(), "{\"ok\":true}");

        assertEquals(200, answer.getStatusCode(), answer.getBody());
        assertEquals("applied", Json.parse(answer.getBody()).path("status").asText());
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(1, fixture.handlers.itemCalls(integration.handlerKey()).size(), "the handler was called once");
    }

    @Test
    void aCallbackEndingAnOrderedRecordsItemReleasesTheNextAtOnce() {
        var integration = fixture.integration(false, Json.object().put("ordered_by_record", true));
        AtomicInteger calls = new AtomicInteger();
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> calls.incrementAndGet() == 1 ? 202 : 200);
        UUID first = webhook(integration, "deal-9");
        awaitStatus(first, ItemStatus.PENDING);
        UUID second = webhook(integration, "deal-9");
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> items(second).getFirst().waitingForRecordSince() != null);
        assertEquals(1, fixture.handlers.itemCalls(integration.handlerKey()).size(), "the later item waits while the earlier is pending");
        var whyAnswer = fixture.api("GET", "/tenants/" + integration.tenantId(), null);
        assertEquals(200, whyAnswer.status(), whyAnswer.body());
        JsonNode why = Json.parse(whyAnswer.body()).path("handlers").get(0);
        assertEquals(1, why.path("items").path("pending").asInt(), why.toString());
        assertEquals(Map.of("callback", 1, "record_order", 1), nowReasons(why), "why is it waiting: " + why);

        APIGatewayV2HTTPResponse answer = callback(onlyCall(integration.handlerKey()).path("callbackUrl").asText(), "{\"ok\":true}");

        assertEquals(200, answer.getStatusCode(), answer.getBody());
        fixture.awaitRun(first, RunStatus.COMPLETED, Duration.ofSeconds(20));
        // Released by the callback's record, not by the overdue sweep's recheck (RecordOrder.RECHECK, minutes later).
        fixture.awaitRun(second, RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(2, fixture.handlers.itemCalls(integration.handlerKey()).size());
    }

    @Test
    void aCallbackBeforeTheHandlersOwn202IsKeptAndAppliedWhenThe202IsRecorded() {
        var integration = fixture.integration(false);
        AtomicReference<APIGatewayV2HTTPResponse> early = new AtomicReference<>();
        // The handler calls back while Runner still waits for its answer, then answers 202.
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> {
            early.set(callback(item.path("callbackUrl").asText(), "{\"ok\":true}"));
            return 202;
        });
        UUID runId = webhook(integration, "c-early");

        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));

        assertEquals(202, early.get().getStatusCode(), early.get().getBody());
        assertEquals("accepted", Json.parse(early.get().getBody()).path("status").asText());
        assertEquals(ItemStatus.SUCCEEDED, items(runId).getFirst().status());
        assertEquals(1, fixture.handlers.itemCalls(integration.handlerKey()).size());
    }

    @Test
    void aRepeatedCallbackIsAnsweredWithTheFirstsResultAndChangesNothing() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(integration, "c-repeat");
        awaitStatus(runId, ItemStatus.PENDING);
        String url = onlyCall(integration.handlerKey()).path("callbackUrl").asText();

        APIGatewayV2HTTPResponse first = callback(url, "{\"ok\":false,\"error\":\"partner refused the record\",\"retryable\":false}");
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(20));
        APIGatewayV2HTTPResponse again = callback(url, "{\"ok\":true}");

        assertEquals(200, first.getStatusCode(), first.getBody());
        assertEquals(200, again.getStatusCode(), again.getBody());
        JsonNode repeated = Json.parse(again.getBody());
        assertEquals("repeated", repeated.path("status").asText());
        assertEquals(false, repeated.path("result").path("ok").asBoolean());
        assertEquals("partner refused the record", repeated.path("result").path("error").asText());
        ItemQueries.ItemView item = items(runId).getFirst();
        assertEquals(ItemStatus.DEAD, item.status(), "a permanent failure by callback goes to the DLQ as a synchronous one");
        assertEquals("partner refused the record", item.lastError());
        assertEquals(RunStatus.COMPLETED_WITH_ERRORS, fixture.runner.runStore().find(runId).orElseThrow().status());
    }

    @Test
    void forgedTamperedOrUnknownCallbacksAreRefusedAndChangeNothing() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(integration, "c-forged");
        JsonNode item = awaitStatus(runId, ItemStatus.PENDING);
        String url = onlyCall(integration.handlerKey()).path("callbackUrl").asText();
        String token = url.substring(url.lastIndexOf('/') + 1);
        String[] parts = token.split("\\.");
        String signature = parts[3];
        String flipped = (signature.charAt(0) == 'A' ? 'B' : 'A') + signature.substring(1);

        for (String forged : List.of(
                parts[0] + "." + parts[1] + "." + parts[2] + "." + flipped,               // signature tampered
                parts[0] + ".2." + parts[2] + "." + signature,                            // another attempt
                parts[0] + "." + parts[1] + "." + (Long.parseLong(parts[2]) + 3600) + "." + signature, // a later expiry
                UUID.randomUUID() + "." + parts[1] + "." + parts[2] + "." + signature,    // another item
                "not-a-token")) {
            APIGatewayV2HTTPResponse refused = callback("https://callbacks.example/callbacks/" + forged, "{\"ok\":true}");
            assertEquals(404, refused.getStatusCode(), forged + ": " + refused.getBody());
            assertEquals("unknown_callback", Json.parse(refused.getBody()).path("error").asText());
        }
        assertEquals("pending", statusOf(runId, item.path("itemId").asText()));
        assertEquals(400, callback(url, "{\"ok\":\"yes\"}").getStatusCode(), "a malformed body is refused too");
        assertEquals("pending", statusOf(runId, item.path("itemId").asText()));
    }

    @Test
    void pastItsWaitTheAttemptFailsAsATimeoutAndALateCallbackIsRefused() {
        var integration = fixture.integration(false, Json.object().put("callback_timeout_ms", 1000));
        // Attempt 1 answers pending and never calls back; attempt 2 answers at once.
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> item.path("attempt").asInt() == 1 ? 202 : 200);
        UUID runId = webhook(integration, "c-late");
        awaitStatus(runId, ItemStatus.PENDING);
        String url = onlyCall(integration.handlerKey()).path("callbackUrl").asText();

        // The tick times out what is past its wait; until then the item still waits.
        await().atMost(Duration.ofSeconds(20)).until(() -> fixture.runner.callbacks().timeOut() > 0);
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        APIGatewayV2HTTPResponse late = callback(url, "{\"ok\":true}");

        assertEquals(410, late.getStatusCode(), late.getBody());
        assertEquals("callback_expired", Json.parse(late.getBody()).path("error").asText());
        ItemQueries.ItemView item = items(runId).getFirst();
        assertEquals(ItemStatus.SUCCEEDED, item.status());
        assertEquals(2, item.attempts(), "the timed-out attempt counts");
        assertTrue(item.history().toString().contains("no callback within"), item.history().toString());
        assertEquals(2, fixture.handlers.itemCalls(integration.handlerKey()).size());
    }

    @Test
    void cancelEndsAWaitingItemAndItsCallbackIsRefused() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(integration, "c-cancel");
        awaitStatus(runId, ItemStatus.PENDING);
        String url = onlyCall(integration.handlerKey()).path("callbackUrl").asText();

        assertEquals(202, fixture.api("POST", "/runs/" + runId + "/cancel", null).status());
        fixture.awaitRun(runId, RunStatus.CANCELLED, Duration.ofSeconds(20));
        APIGatewayV2HTTPResponse refused = callback(url, "{\"ok\":true}");

        assertEquals(410, refused.getStatusCode(), refused.getBody());
        assertEquals("callback_attempt_ended", Json.parse(refused.getBody()).path("error").asText());
        assertEquals(ItemStatus.CANCELLED, items(runId).getFirst().status());
    }

    @Test
    void aBatchHandlersPendingResultsWaitEachForItsOwnCallback() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(integration, "b-1", "b-2");
        await().atMost(Duration.ofSeconds(20)).until(() -> items(runId).stream().allMatch(i -> i.status() == ItemStatus.PENDING));

        List<JsonNode> sent = fixture.handlers.itemCalls(integration.handlerKey()).stream().flatMap(c -> FakeHandler.items(c).stream()).toList();
        assertEquals(2, sent.size());
        assertEquals(200, callback(sent.get(0).path("callbackUrl").asText(), "{\"ok\":true}").getStatusCode());
        assertEquals(RunStatus.RUNNING, fixture.runner.runStore().find(runId).orElseThrow().status(), "one item still waits");
        assertEquals(200, callback(sent.get(1).path("callbackUrl").asText(), "{\"ok\":true}").getStatusCode());

        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
    }

    @Test
    void aPendingItemHoldsItsHandlersLeaseOnlyWhenItsHandlerSaysSo() {
        var holding = fixture.integration(false, Json.object().put("concurrency", 1).put("pending_holds_lease", true));
        fixture.handlers.handler(holding.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(holding, "h-1");
        awaitStatus(runId, ItemStatus.PENDING);

        List<String> held = leaseMembers(holding);
        assertEquals(1, held.size(), "the waiting item keeps one lease: " + held);
        assertTrue(held.getFirst().startsWith("pending:"), held.toString());
        assertEquals(200, callback(onlyCall(holding.handlerKey()).path("callbackUrl").asText(), "{\"ok\":true}").getStatusCode());
        assertEquals(List.of(), leaseMembers(holding), "its callback gives the lease back");

        var free = fixture.integration(false, Json.object().put("concurrency", 1));
        fixture.handlers.handler(free.handlerKey()).itemStatus(item -> 202);
        awaitStatus(webhook(free, "f-1"), ItemStatus.PENDING);
        assertEquals(List.of(), leaseMembers(free), "by default a waiting item holds no lease");
    }

    /** A cancel gives a waiting item's held lease back with its answer: the handler's next item need not wait out the callback's timeout. */
    @Test
    void cancellingAWaitingItemGivesItsHeldLeaseBackAtOnce() {
        var holding = fixture.integration(false, Json.object().put("concurrency", 1).put("pending_holds_lease", true)
                .put("callback_timeout_ms", 600_000));
        fixture.handlers.handler(holding.handlerKey()).itemStatus(item -> 202);
        UUID runId = webhook(holding, "x-1");
        awaitStatus(runId, ItemStatus.PENDING);
        assertEquals(1, leaseMembers(holding).size(), "the waiting item holds the handler's one lease");

        assertEquals(202, fixture.api("POST", "/runs/" + runId + "/cancel", null).status());

        assertEquals(List.of(), leaseMembers(holding), "the cancel gave the lease back");
        assertEquals(ItemStatus.CANCELLED, items(runId).getFirst().status());
        fixture.handlers.handler(holding.handlerKey()).itemStatus(item -> 200);
        fixture.awaitRun(webhook(holding, "x-2"), RunStatus.COMPLETED, Duration.ofSeconds(20));
    }

    /** The reasons that hold a handler's items now, with their counts ({@code GET /tenants/{tenantId}}'s waitingFor). */
    private static Map<String, Integer> nowReasons(JsonNode handler) {
        Map<String, Integer> now = new java.util.TreeMap<>();
        handler.path("waitingFor").forEach(reason -> {
            if (reason.path("now").asBoolean()) {
                now.put(reason.path("reason").asText(), reason.path("items").asInt());
            }
        });
        return now;
    }

    /** The members of the handler's leases set, read with a client of the test's own. */
    private static List<String> leaseMembers(PipelineFixture.Integration integration) {
        String key = new dev.runner.redis.Keys(fixture.stack.environment().get("RUNNER_REDIS_PREFIX"))
                .leases(integration.integrationKey(), integration.handlerKey());
        var client = io.lettuce.core.RedisClient.create(fixture.stack.environment().get("RUNNER_REDIS_URL"));
        try (var connection = client.connect()) {
            return connection.sync().zrange(key, 0, -1);
        } finally {
            client.shutdown();
        }
    }

    private UUID webhook(PipelineFixture.Integration integration, String... externalIds) {
        StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < externalIds.length; i++) {
            body.append(i == 0 ? "" : ",").append("{\"externalId\":\"").append(externalIds[i]).append("\",\"n\":").append(i).append('}');
        }
        APIGatewayV2HTTPResponse response = fixture.webhook(fixture.webhookEvent(integration, body.append(']').toString()));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }

    private static APIGatewayV2HTTPResponse callback(String url, String body) {
        return fixture.callback(url, body);
    }

    private static JsonNode onlyCall(String handlerKey) {
        List<FakeHandler.Call> calls = fixture.handlers.itemCalls(handlerKey);
        assertEquals(1, calls.size());
        return FakeHandler.items(calls.getFirst()).getFirst();
    }

    private static List<ItemQueries.ItemView> items(UUID runId) {
        return fixture.runner.itemQueries().list(runId, null, null, 100);
    }

    private static String statusOf(UUID runId, String itemId) {
        return items(runId).stream().filter(i -> i.itemId().toString().equals(itemId)).findFirst().orElseThrow().status().wireName();
    }

    private static JsonNode awaitStatus(UUID runId, ItemStatus status) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> items(runId).stream().anyMatch(i -> i.status() == status));
        ItemQueries.ItemView item = items(runId).stream().filter(i -> i.status() == status).findFirst().orElseThrow();
        return Json.object().put("itemId", item.itemId().toString()).put("status", item.status().wireName());
    }
}
