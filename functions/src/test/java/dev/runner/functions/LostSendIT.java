package dev.runner.functions;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemStore;
import dev.runner.item.ItemMessage;
import dev.runner.json.Json;
import dev.runner.pipeline.RunService;
import dev.runner.run.RunStatus;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A send that fails after its rows were committed (issue 7 follow-ups 1 and 3): the request is
 * still accepted, the scheduler's sweep sends what is owed however busy the tier, and a client
 * that retries POST /runs with its Idempotency-Key gets the run it already has. Real servers: a
 * second root whose manual tiers name queues that do not exist is the SQS that refuses the send;
 * nothing consumes the queues here, so what the sweep sends stays visible to be read.
 */
class LostSendIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_SWEEP_UNSENT_S", "1"));

    /** The same stack, but SQS refuses every send to the manual tiers (QueueDoesNotExist). */
    private static Runner refusing;
    /** The scheduler as deployed: only what SchedulerFunction is granted (issue 7.1), so its sweep's sends are held to it. */
    private static Runner scheduler;

    @BeforeAll
    static void start() {
        fixture.pump.close();
        refusing = fixture.root(Map.of("RUNNER_QUEUE_ITEMS_MANUAL", fixture.stack.url("items-manual") + "-gone",
                "RUNNER_QUEUE_RUNS_MANUAL", fixture.stack.url("runs-manual") + "-gone",
                "RUNNER_QUEUE_ITEMS_WEBHOOK", fixture.stack.url("items-webhook") + "-gone")).serve(ApiFunction.GRANTS).serve(WebhookFunction.GRANTS);
        scheduler = fixture.root(Map.of()).serve(SchedulerFunction.GRANTS);
    }

    @AfterAll
    static void stop() {
        refusing.close();
        scheduler.close();
    }

    @Test
    void itemsWhoseSendFailedAfterTheCommitAreSentByTheSweepOnATierThatIsNeverQuiet() {
        var integration = fixture.integration(true);
        long backlog = keepBusy("items-manual");
        HandlerSpec handler = fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()).orElseThrow();

        RunService.Started started = refusing.runService().startWithItems(integration.tenantId(), integration.integrationKey(), handler,
                Trigger.MANUAL, newItems(2), RunService.Keep.ALL);

        Set<String> itemIds = fixture.runner.database().query("select item_id from execution_items where run_id = ?",
                row -> row.getObject(1, UUID.class).toString(), started.runId()).stream().collect(Collectors.toSet());
        assertEquals(2, itemIds.size());
        // Every tick sees a backlog on the tier (the backstop sweep leaves such a tier alone); the owed items are sent anyway
        // (both in one message: one run's items).
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() -> {
            scheduler.scheduler().tick(Instant.now());
            return visible("items-manual") >= backlog + 1;
        });
        assertTrue(itemIdsOn("items-manual").containsAll(itemIds), "the owed items are on their tier");
    }

    @Test
    void aBacklogWaitingOnABusyTierIsNotSentAgain() {
        var integration = fixture.integration(true);
        HandlerSpec handler = fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()).orElseThrow();
        RunService.Started started = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(),
                handler, Trigger.MANUAL, newItems(2), RunService.Keep.ALL);
        keepBusy("items-manual");
        // Sent (nothing owed), then waiting its turn behind a backlog for half an hour: overdue by any grace, but not lost.
        fixture.runner.database().update("update execution_items set updated_at = now() - interval '30 minutes' where run_id = ?",
                started.runId());
        long held = held("items-manual");

        scheduler.scheduler().tick(Instant.now());

        // Every message the tier holds, visible or not: a delayed one from an earlier test turning visible changes nothing.
        assertEquals(held, held("items-manual"), "no copy sent");
    }

    @Test
    void aRunWhoseRunJobSendFailedAfterTheCommitIsAcceptedAndSentByTheSweep() {
        var integration = fixture.integration(true);
        long backlog = keepBusy("runs-manual");

        ApiResponse created = post(refusing, runRequest(integration.tenantId(), integration.integrationKey(), integration.handlerKey()), null);

        assertEquals(202, created.status(), "the run is committed: not a failure the client would retry; " + created.body());
        UUID runId = UUID.fromString(Json.parse(created.body()).path("runId").asText());
        assertEquals(RunStatus.QUEUED, fixture.runner.runStore().find(runId).orElseThrow().status());
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() -> {
            scheduler.scheduler().tick(Instant.now());
            return visible("runs-manual") >= backlog + 1;
        });
        assertTrue(runIdsOn("runs-manual").contains(runId.toString()), "the owed RunJob is on its tier");
    }

    @Test
    void aWebhookWhoseSendFailedAfterTheCommitIsAcceptedAndItsItemSentByTheSweep() {
        var integration = fixture.integration(true);
        long backlog = keepBusy("items-webhook");

        var answer = Lambda.http(new WebhookFunction(refusing), fixture.webhookEvent(integration, "{\"externalId\":\"owed\"}"),
                TestContext.of("webhook", 30_000));

        assertEquals(202, answer.getStatusCode(), "committed: not a failure the sender would retry; " + answer.getBody());
        String itemId = fixture.runner.database().query("select item_id from execution_items where tenant_id = ?",
                row -> row.getObject(1, UUID.class).toString(), integration.tenantId()).getFirst();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() -> {
            scheduler.scheduler().tick(Instant.now());
            return visible("items-webhook") >= backlog + 1;
        });
        assertTrue(itemIdsOn("items-webhook").contains(itemId), "the owed item is on its tier");
    }

    /** The record that a webhook's item is owed goes with the next accept's statement once the item went out. */
    @Test
    void theRecordOfASentWebhookIsDeletedByTheNextAccept() {
        var integration = fixture.integration(true);
        assertEquals(202, fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"first\"}")).getStatusCode());
        UUID first = itemOf(integration, "first");
        assertEquals(1, owedRecordsNaming(first), "sent, its record kept for the next accept to delete");

        assertEquals(202, fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"second\"}")).getStatusCode());

        assertEquals(0, owedRecordsNaming(first), "deleted by the next accept's statement");
        assertEquals(1, owedRecordsNaming(itemOf(integration, "second")));
    }

    /** The last accept's record, found by the sweep once its item has been claimed: deleted, the item not sent again. */
    @Test
    void aRecordNoAcceptFollowedIsDeletedByTheSweepWithoutSendingAClaimedItemAgain() {
        var integration = fixture.integration(true);
        assertEquals(202, fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"last\"}")).getStatusCode());
        UUID item = itemOf(integration, "last");
        fixture.runner.database().update("update execution_items set status = 'succeeded', finished_at = now() where item_id = ?", item);
        fixture.runner.database().update("update pending_sends set tried_at = now() - interval '1 minute' where ? = any(ids)", item);
        long held = held("items-webhook");

        scheduler.scheduler().tick(Instant.now());

        assertEquals(0, owedRecordsNaming(item));
        assertEquals(held, held("items-webhook"), "no copy of a claimed item's message");
    }

    @Test
    void aRetryWithTheSameIdempotencyKeyAnswersTheFirstRunAndStartsNoOther() {
        var integration = fixture.integration(true);
        ObjectNode body = runRequest(integration.tenantId(), integration.integrationKey(), integration.handlerKey());
        String key = UUID.randomUUID().toString();

        ApiResponse first = post(refusing, body, key);
        ApiResponse retry = post(fixture.runner, body, key);

        assertEquals(202, first.status(), first.body());
        assertEquals(202, retry.status(), retry.body());
        assertEquals(Json.parse(first.body()).path("runId"), Json.parse(retry.body()).path("runId"));
        assertNull(first.headers().get("idempotent-replayed"));
        assertEquals("true", retry.headers().get("idempotent-replayed"));
        assertEquals(1, runsOf(integration.tenantId()));
    }

    @Test
    void concurrentRequestsWithOneKeyMakeOneRun() throws Exception {
        var integration = fixture.integration(true);
        ObjectNode body = runRequest(integration.tenantId(), integration.integrationKey(), integration.handlerKey());
        String key = UUID.randomUUID().toString();
        List<Callable<ApiResponse>> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(() -> post(fixture.runner, body, key));
        }
        Set<String> runIds = new java.util.HashSet<>();
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Future<ApiResponse> answer : threads.invokeAll(requests)) {
                assertEquals(202, answer.get().status(), answer.get().body());
                runIds.add(Json.parse(answer.get().body()).path("runId").asText());
            }
        }
        assertEquals(1, runIds.size(), "one run for one key: " + runIds);
        assertEquals(1, runsOf(integration.tenantId()));
    }

    @Test
    void aKeyUsedForAnotherRequestIsRefusedAndAnotherTenantsKeyIsItsOwn() {
        var integration = fixture.integration(true);
        var other = fixture.integration(true);
        String key = "order-4711";
        assertEquals(202, post(fixture.runner, runRequest(integration.tenantId(), integration.integrationKey(), integration.handlerKey()), key).status());

        // Same tenant and key, another handler: the key does not silently start or replay something else.
        fixture.api("PUT", "/tenants/" + integration.tenantId() + "/integrations/" + other.integrationKey(), Json.object().put("enabled", true));
        ApiResponse reused = post(fixture.runner, runRequest(integration.tenantId(), other.integrationKey(), other.handlerKey()), key);
        assertEquals(422, reused.status(), reused.body());
        assertEquals("idempotency_key_reused", Json.parse(reused.body()).path("error").asText());

        // Another tenant's request with the same key is a request of its own.
        ApiResponse otherTenant = post(fixture.runner, runRequest(other.tenantId(), other.integrationKey(), other.handlerKey()), key);
        assertEquals(202, otherTenant.status(), otherTenant.body());
        assertNull(otherTenant.headers().get("idempotent-replayed"));
        assertEquals(1, runsOf(integration.tenantId()));
        assertEquals(1, runsOf(other.tenantId()));
    }

    @Test
    void anIdempotencyKeyThatIsEmptyTooLongOrNotAsciiIsABadRequest() {
        var integration = fixture.integration(true);
        ObjectNode body = runRequest(integration.tenantId(), integration.integrationKey(), integration.handlerKey());
        for (String key : List.of("", "k".repeat(256), "clé")) {
            assertEquals(400, post(fixture.runner, body, key).status(), "key " + key);
        }
        assertEquals(0, runsOf(integration.tenantId()));
    }

    // ------------------------------------------------------------------ helpers

    private static UUID itemOf(PipelineFixture.Integration integration, String externalId) {
        return fixture.runner.database().query("select item_id from execution_items where tenant_id = ? and external_id = ?",
                row -> row.getObject(1, UUID.class), integration.tenantId(), externalId).getFirst();
    }

    private static long owedRecordsNaming(UUID itemId) {
        return fixture.runner.database().query("select count(*) from pending_sends where ? = any(ids)", row -> row.getLong(1), itemId)
                .getFirst();
    }

    private static ObjectNode runRequest(String tenantId, String integrationKey, String handlerKey) {
        return Json.object().put("tenantId", tenantId).put("integrationKey", integrationKey).put("handlerKey", handlerKey);
    }

    private static ApiResponse post(Runner runner, ObjectNode body, String idempotencyKey) {
        Map<String, String> headers = new HashMap<>();
        headers.put("authorization", "Bearer " + fixture.apiKey);
        if (idempotencyKey != null) {
            headers.put("idempotency-key", idempotencyKey);
        }
        return runner.api().handle(new ApiRequest("POST", "/runs", Map.of(), headers, Map.of(), Json.writeBytes(body)));
    }

    private static long runsOf(String tenantId) {
        return fixture.runner.database().queryOne("select count(*) from runs where tenant_id = ?", row -> row.getLong(1), tenantId)
                .orElseThrow();
    }

    /** Messages nobody consumes: the tier shows a visible backlog at every tick. Returns the tier's visible messages now. */
    private static long keepBusy(String suffix) {
        for (int i = 0; i < 3; i++) {
            fixture.stack.sqs().sendMessage(b -> b.queueUrl(fixture.stack.url(suffix)).messageBody("{\"backlog\":true}"));
        }
        return visible(suffix);
    }

    private static long visible(String suffix) {
        return fixture.runner.queues().visibleMessages(fixture.stack.url(suffix));
    }

    /** Messages on the tier: visible, in flight and delayed. */
    private static long held(String suffix) {
        var attributes = fixture.stack.sqs().getQueueAttributes(b -> b.queueUrl(fixture.stack.url(suffix)).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED)).attributes();
        return attributes.values().stream().mapToLong(Long::parseLong).sum();
    }

    /** What the tier holds, read without taking it (visibility 0), so the backlog stays visible; receives kept few (maxReceiveCount). */
    private static List<Message> peek(String suffix) {
        List<Message> seen = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            seen.addAll(fixture.stack.sqs().receiveMessage(b -> b.queueUrl(fixture.stack.url(suffix)).maxNumberOfMessages(10)
                    .visibilityTimeout(0)).messages());
        }
        return seen;
    }

    private static Set<String> itemIdsOn(String suffix) {
        return peek(suffix).stream().filter(m -> Json.parse(m.body()).has("type")) // the backlog's stand-ins are no item messages
                .flatMap(m -> ItemMessage.read(Json.parse(m.body())).stream()).map(job -> job.itemId().toString()).collect(Collectors.toSet());
    }

    private static Set<String> runIdsOn(String suffix) {
        return peek(suffix).stream().map(m -> Json.parse(m.body()).path("runId").asText("")).collect(Collectors.toSet());
    }

    private static List<ItemStore.NewItem> newItems(int n) {
        return IntStream.range(0, n).mapToObj(i -> new ItemStore.NewItem("x-" + UUID.randomUUID(), Json.object().put("i", i))).toList();
    }
}
