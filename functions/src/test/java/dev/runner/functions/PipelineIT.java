package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
import dev.runner.run.Run;
import dev.runner.run.RunStatus;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The core pipeline end to end: function classes fed the events/ samples, real Postgres, SQS and HTTP. */
class PipelineIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void signedWebhookItemsReachTheHandlerAndTheRunCompletes() {
        var integration = fixture.integration(true);
        APIGatewayV2HTTPEvent event = fixture.webhookEvent(integration, Events.load("webhook.json", APIGatewayV2HTTPEvent.class).getBody());

        APIGatewayV2HTTPResponse response = fixture.webhook(event);

        assertEquals(202, response.getStatusCode(), response.getBody());
        JsonNode body = Json.parse(response.getBody());
        assertEquals(2, body.path("accepted").asInt());
        UUID runId = UUID.fromString(body.path("runId").asText());
        Run run = fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals("webhook", run.trigger().wireName());
        List<FakeHandler.Call> calls = fixture.handlers.itemCalls(integration.handlerKey());
        assertEquals(List.of("lead-1", "lead-2"), calls.stream().flatMap(c -> FakeHandler.items(c).stream())
                .map(item -> item.path("externalId").asText()).sorted().toList());
        assertTrue(calls.stream().allMatch(FakeHandler.Call::signatureValid), "every handler call is signed");
        assertTrue(calls.stream().allMatch(c -> c.idempotencyKey() != null && !c.idempotencyKey().isBlank()), "every call has an Idempotency-Key");
    }

    @Test
    void manualRunOf250ItemsOver5PagesCompletesWithTheRightCounts() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(5, 50);
        APIGatewayV2HTTPEvent event = Events.load("api-create-run.json", APIGatewayV2HTTPEvent.class);
        event.setHeaders(Map.of("authorization", "Bearer " + fixture.apiKey, "content-type", "application/json"));
        event.setBody(Json.write(Json.object().put("tenantId", integration.tenantId())
                .put("integrationKey", integration.integrationKey()).put("handlerKey", integration.handlerKey())));

        APIGatewayV2HTTPResponse created = Lambda.http(new ApiFunction(fixture.runner), event, TestContext.of("api", 30_000));

        assertEquals(202, created.getStatusCode(), created.getBody());
        UUID runId = UUID.fromString(Json.parse(created.getBody()).path("runId").asText());
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(30));
        APIGatewayV2HTTPEvent get = Events.load("api-get-run.json", APIGatewayV2HTTPEvent.class);
        get.setHeaders(Map.of("authorization", "Bearer " + fixture.apiKey));
        get.setRawPath("/runs/" + runId);
        get.setPathParameters(Map.of("runId", runId.toString()));
        JsonNode run = Json.parse(Lambda.http(new ApiFunction(fixture.runner), get, TestContext.of("api", 30_000)).getBody());
        assertEquals("completed", run.path("status").asText());
        assertEquals("manual", run.path("trigger").asText());
        assertEquals(2, run.path("priority").asInt());
        assertEquals(250, run.path("counts").path("total").asInt());
        assertEquals(250, run.path("counts").path("succeeded").asInt());
        assertEquals(0, run.path("counts").path("dead").asInt());
        assertEquals(5, fixture.handlers.calls(integration.handlerKey()).stream().filter(c -> c.operation().equals("fetch")).count());
        assertEquals("eu", fixture.handlers.calls(integration.handlerKey()).getFirst().body().path("settings").path("region").asText(),
                "fetch carries the tenant's settings");
    }

    @Test
    void anItemThatAlwaysFailsIsCalledThreeTimesThenDeadWithDlqAt() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 503);

        UUID runId = webhookRun(integration, "[{\"externalId\":\"doomed\"}]");

        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));
        ItemQueries.ItemView item = fixture.runner.itemQueries().list(runId, null, null, 10).getFirst();
        assertEquals(ItemStatus.DEAD, item.status());
        assertNotNull(item.dlqAt(), "dlq_at stamped");
        assertEquals(3, item.attempts());
        assertTrue(item.lastError().contains("503"), item.lastError());
        assertEquals(3, item.history().size(), "every failed attempt kept");
        assertEquals(3, fixture.handlers.timesProcessed(integration.handlerKey(), item.itemId().toString()));
    }

    @Test
    void aPermanentFailureIsDeadAfterOneCall() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 422);

        UUID runId = webhookRun(integration, "{\"externalId\":\"invalid-lead\"}");

        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(20));
        ItemQueries.ItemView item = fixture.runner.itemQueries().list(runId, null, null, 10).getFirst();
        assertEquals(ItemStatus.DEAD, item.status());
        assertNotNull(item.dlqAt());
        assertEquals(1, fixture.handlers.timesProcessed(integration.handlerKey(), item.itemId().toString()));
    }

    @Test
    void aSecondDeliveryOfASucceededItemDoesNotCallTheHandlerAgain() {
        var integration = fixture.integration(false);
        UUID runId = webhookRun(integration, "{\"externalId\":\"once\"}");
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        ItemQueries.ItemView item = fixture.runner.itemQueries().list(runId, null, null, 10).getFirst();
        assertEquals(1, fixture.handlers.timesProcessed(integration.handlerKey(), item.itemId().toString()));

        SQSEvent redelivery = Events.load("sqs-item-job.json", SQSEvent.class);
        var job = new dev.runner.item.ItemJob(runId, item.itemId(), integration.tenantId(), integration.integrationKey(),
                integration.handlerKey(), dev.runner.integration.Direction.INBOUND, dev.runner.trigger.Trigger.WEBHOOK, "once", 1, 0);
        redelivery.getRecords().getFirst().setBody(Json.write(job.toJson()));
        redelivery.getRecords().getFirst().getAttributes().put("ApproximateReceiveCount", "2");
        var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), redelivery, TestContext.of("items", 60_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), "acknowledged, not retried");
        assertEquals(1, fixture.handlers.timesProcessed(integration.handlerKey(), item.itemId().toString()));
        assertEquals(ItemStatus.SUCCEEDED, fixture.runner.itemQueries().list(runId, null, null, 10).getFirst().status());
    }

    @Test
    void aMalformedSqsBodyLandsInDeadLetters() {
        SQSEvent event = Events.load("sqs-item-job.json", SQSEvent.class);
        String marker = "not json " + UUID.randomUUID();
        event.getRecords().getFirst().setBody(marker);

        var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), event, TestContext.of("items", 60_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), "kept, so not retried");
        var kept = fixture.runner.deadLetterStore().recent(50).stream().filter(l -> l.body().equals(marker)).toList();
        assertEquals(1, kept.size());
        assertTrue(kept.getFirst().reason().contains("unreadable"), kept.getFirst().reason());
        assertEquals("runner-items-manual", kept.getFirst().source());
    }

    private UUID webhookRun(PipelineFixture.Integration integration, String body) {
        APIGatewayV2HTTPResponse response = fixture.webhook(fixture.webhookEvent(integration, body));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }
}
