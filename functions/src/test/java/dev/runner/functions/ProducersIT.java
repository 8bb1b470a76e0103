package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.app.Runner;
import dev.runner.http.ApiResponse;
import dev.runner.item.ItemStatus;
import dev.runner.json.Json;
import dev.runner.pipeline.RunService;
import dev.runner.queue.QueueMessage;
import dev.runner.run.Run;
import dev.runner.run.RunJob;
import dev.runner.run.RunStatus;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.runner.security.StandardWebhooks;
import dev.runner.testing.HostileHandler;
import com.fasterxml.jackson.databind.node.ObjectNode;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The other producers and consumers: scheduler, ingest, redrive, runs DLQ, fetch continuation. */
class ProducersIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void aDueScheduleFiresOnceEvenWhenTwoTicksOverlap() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 3);
        var tenant = Json.object().put("enabled", true);
        tenant.putObject("schedules").put(integration.handlerKey(), "rate(1 minute)");
        assertEquals(200, fixture.api("PUT", "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey(), tenant).status());
        fixture.runner.database().update("update schedules set next_fire_at = now() - interval '1 second' where tenant_id = ?", integration.tenantId());

        var scheduler = new SchedulerFunction(fixture.runner);
        ScheduledEvent event = Events.load("scheduled.json", ScheduledEvent.class);
        var ticks = List.of(Thread.ofVirtual().start(() -> Lambda.text(scheduler, event, TestContext.of("scheduler", 30_000))),
                Thread.ofVirtual().start(() -> Lambda.text(scheduler, event, TestContext.of("scheduler", 30_000))));
        for (Thread tick : ticks) {
            join(tick);
        }
        Lambda.text(scheduler, event, TestContext.of("scheduler", 30_000));

        List<Run> runs = runsOf(integration.tenantId());
        assertEquals(1, runs.size(), "one run per due time");
        assertEquals("schedule", runs.getFirst().trigger().wireName());
        fixture.awaitRun(runs.getFirst().runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        Instant next = fixture.runner.database().queryOne("select next_fire_at from schedules where tenant_id = ?",
                row -> row.getTimestamp(1).toInstant(), integration.tenantId()).orElseThrow();
        assertTrue(next.isAfter(Instant.now()), "moved to the next due time: " + next);
    }

    @Test
    void anInvalidScheduleIsRefusedWithTheReason() {
        var integration = fixture.integration(true);
        var tenant = Json.object().put("enabled", true);
        tenant.putObject("schedules").put(integration.handlerKey(), "rate(5 minute)");
        ApiResponse response = fixture.api("PUT", "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey(), tenant);
        assertEquals(400, response.status());
        assertTrue(Json.parse(response.body()).path("message").asText().contains("rate(5 minute)"), response.body());
    }

    @Test
    void ingestedMessagesBecomeARunWithTriggerQueueAndBadOnesAreKept() {
        var integration = fixture.integration(true);
        SQSEvent event = Events.load("sqs-ingest.json", SQSEvent.class);
        String good = IngestIT.envelope(integration, "ext-1");
        Map<String, MessageAttributeValue> signature = new HashMap<>();
        StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + UUID.randomUUID(), Instant.now().getEpochSecond(),
                good.getBytes(StandardCharsets.UTF_8)).forEach((name, value) ->
                signature.put(name, MessageAttributeValue.builder().dataType("String").stringValue(value).build()));
        fixture.stack.sqs().sendMessage(b -> b.queueUrl(fixture.stack.url("ingest")).messageBody(good).messageAttributes(signature));
        String unsigned = IngestIT.envelope(integration, "ext-unsigned");
        fixture.stack.sqs().sendMessage(b -> b.queueUrl(fixture.stack.url("ingest")).messageBody(unsigned));
        String unknownTenant = good.replace(integration.tenantId(), "nobody-" + UUID.randomUUID());
        fixture.stack.sqs().sendMessage(b -> b.queueUrl(fixture.stack.url("ingest")).messageBody(unknownTenant).messageAttributes(signature));
        fixture.stack.sqs().sendMessage(b -> b.queueUrl(fixture.stack.url("ingest")).messageBody("{\"tenantId\":\"x\"}"));

        await().atMost(Duration.ofSeconds(20)).until(() -> runsOf(integration.tenantId()).stream().anyMatch(r -> r.status() == RunStatus.COMPLETED));
        Run run = runsOf(integration.tenantId()).getFirst();
        assertEquals("queue", run.trigger().wireName());
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.runner.deadLetterStore().recent(100).stream()
                .anyMatch(l -> l.body().equals(unknownTenant) && l.reason().contains("has no integration")));
        assertTrue(fixture.runner.deadLetterStore().recent(100).stream()
                .anyMatch(l -> l.body().equals("{\"tenantId\":\"x\"}") && l.reason().contains("invalid envelope")));
        assertTrue(fixture.runner.deadLetterStore().recent(100).stream()
                .anyMatch(l -> l.body().equals(unsigned) && l.reason().contains("unbound")));
        assertEquals(1, runsOf(integration.tenantId()).size(), "the unsigned message acted for no one");

        // The events/ sample goes through the function class as Lambda would hand it over: signed, then sent again.
        var record = event.getRecords().getFirst();
        String sample = IngestIT.envelope(integration, "ext-sample");
        record.setBody(sample);
        record.getAttributes().put("SentTimestamp", Long.toString(Instant.now().toEpochMilli()));
        StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + UUID.randomUUID(), Instant.now().getEpochSecond(),
                sample.getBytes(StandardCharsets.UTF_8)).forEach((name, value) -> record.getMessageAttributes().get(name).setStringValue(value));
        var response = Lambda.sqs(new IngestFunction(fixture.runner), event, TestContext.of("ingest", 30_000));
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertEquals(2, runsOf(integration.tenantId()).size());
        Lambda.sqs(new IngestFunction(fixture.runner), event, TestContext.of("ingest", 30_000));
        assertEquals(2, runsOf(integration.tenantId()).size(), "a redelivery makes nothing new");
    }

    @Test
    void redriveSendsDeadItemsBackAndTheRunCompletesAgain() {
        var integration = fixture.integration(false);
        var behaviour = fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 400);
        UUID runId = webhookRun(integration, "[{\"externalId\":\"r-1\"},{\"externalId\":\"r-2\"}]");
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(20));
        behaviour.itemStatus(item -> 200);

        ApiResponse redrive = fixture.api("POST", "/runs/" + runId + "/redrive", null);

        assertEquals(202, redrive.status(), redrive.body());
        assertEquals(2, Json.parse(redrive.body()).path("redriven").asInt());
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        ApiResponse dead = fixture.api("GET", "/runs/" + runId + "/items", null);
        JsonNode items = Json.parse(dead.body()).path("items");
        assertEquals(2, items.size());
        items.forEach(item -> assertEquals("succeeded", item.path("status").asText()));
        items.forEach(item -> assertEquals(1, item.path("history").size(), "the dead attempt is kept in the history"));
    }

    @Test
    void aFetchThatKeepsFailingEndsTheRunFailedThroughTheRunsDlq() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).fetchStatus(404);
        ApiResponse created = fixture.api("POST", "/runs", Json.object().put("tenantId", integration.tenantId())
                .put("integrationKey", integration.integrationKey()).put("handlerKey", integration.handlerKey()));
        UUID runId = UUID.fromString(Json.parse(created.body()).path("runId").asText());
        Run run = fixture.awaitRun(runId, RunStatus.FAILED, Duration.ofSeconds(20));
        assertTrue(run.error().contains("404"), run.error());

        var stuck = fixture.runner.runService().startFetching(new RunService.Request(integration.tenantId(),
                integration.integrationKey(), integration.handlerKey(), Trigger.MANUAL));
        SQSEvent dlq = Events.load("sqs-dlq.json", SQSEvent.class);
        var record = dlq.getRecords().getFirst();
        record.setEventSourceArn(fixture.stack.arn("runs-dlq"));
        record.setBody(Json.write(fixture.runner.runStore().find(stuck).orElseThrow().job().toJson()));
        fixture.handlers.handler(integration.handlerKey()).fetchStatus(500);
        Lambda.sqs(new DeadLetterFunction(fixture.runner), dlq, TestContext.of("dlq", 30_000));
        assertEquals(RunStatus.FAILED, fixture.runner.runStore().find(stuck).orElseThrow().status());
    }

    @Test
    void aFetchThatFailsOnceIsRetriedAfterItsBackoffNotTheVisibilityTimeout() {
        var integration = fixture.integration(true);
        AtomicInteger fetches = new AtomicInteger();
        fixture.handlers.handler(integration.handlerKey()).pages(1, 2).fetchStatus(() -> fetches.getAndIncrement() == 0 ? 503 : 200);

        UUID runId = fixture.runner.runService().startFetching(new RunService.Request(integration.tenantId(),
                integration.integrationKey(), integration.handlerKey(), Trigger.MANUAL));

        // The queue's visibility timeout is 30 s here; the backoff of a first failure is base·2^0 = 100 ms, in whole seconds 1 s.
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(25));
        assertEquals(2, fetches.get(), "one failed fetch, one retry");
    }

    @Test
    void aRunJobWhoseStoreWorkFailsOnceIsRetriedAfterItsBackoffNotTheVisibilityTimeout() {
        var integration = fixture.integration(true);
        AtomicInteger fetches = new AtomicInteger();
        fixture.handlers.handler(integration.handlerKey()).pages(1, 2).fetchStatus(() -> {
            fetches.incrementAndGet();
            return 200;
        });
        // Postgres itself refuses the first cursor save of this tenant's run, after the page's items are stored and sent and
        // while the fetch's lease is held: as a pool timeout or a failover would. A sequence, not a row, counts the refusals:
        // the refused statement's own writes roll back.
        String name = "fail_once_" + UUID.randomUUID().toString().replace("-", "");
        var db = fixture.runner.database();
        db.update("create sequence " + name);
        db.update("create function " + name + "() returns trigger language plpgsql as $$ begin"
                + " if nextval('" + name + "') = 1 then raise exception 'store failure for the test'; end if; return new; end $$");
        db.update("create trigger " + name + " before update on runs for each row when (new.tenant_id = '" + integration.tenantId()
                + "' and new.pages_fetched > old.pages_fetched) execute function " + name + "()");
        try {
            UUID runId = fixture.runner.runService().startFetching(new RunService.Request(integration.tenantId(),
                    integration.integrationKey(), integration.handlerKey(), Trigger.MANUAL));

            // The queue's visibility timeout is 30 s here; the backoff of a first failure is base·2^0 = 100 ms, in whole seconds 1 s.
            fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(25));
            assertEquals(2L, db.queryOne("select last_value from " + name, row -> row.getLong(1)).orElseThrow(),
                    "one refused cursor save, one that went through");
            assertEquals(2, fetches.get(), "the page fetched again from the cursor last saved");
            assertTrue(db.queryOne("select fetch_lease_until > now() from runs where run_id = ?", row -> row.getBoolean(1), runId)
                    .orElseThrow(), "the retry took the fetch while the failed try's lease still held: its own message's");
        } finally {
            db.update("drop trigger " + name + " on runs");
            db.update("drop function " + name + "()");
            db.update("drop sequence " + name);
        }
    }

    @Test
    @Timeout(60)
    void aBatchWithMoreRunsThanConnectionsWaitsItsTurnAtThePoolRatherThanTimingOut() throws Exception {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 1);
        List<RunJob> jobs = List.of(runJob(integration), runJob(integration));
        for (RunJob job : jobs) {
            fixture.runner.database().inTransaction(connection -> fixture.runner.runStore().insert(connection, job, RunStatus.QUEUED, null));
        }
        List<QueueMessage> messages = jobs.stream()
                .map(job -> new QueueMessage("m-" + job.runId(), Json.write(job.toJson()), "rh", 1, "runs-manual", Map.of())).toList();
        try (Runner oneConnection = fixture.root(Map.of("RUNNER_DATABASE_POOL_SIZE", "1")).serve(RunWorkerFunction.GRANTS);
             var locker = fixture.runner.database().dataSource().getConnection()) {
            // The first run's row locked: its job blocks in a statement on the pool's only connection, the other job waits for it.
            locker.setAutoCommit(false);
            fixture.runner.database().query(locker, "select 1 from runs where run_id = ? for update", row -> 1, jobs.getFirst().runId());
            long deadline = System.currentTimeMillis() + 50_000;
            var batch = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> oneConnection.runWorker().process(messages, () -> deadline - System.currentTimeMillis()));
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.runner.database().queryOne(
                    "select count(*) from pg_locks where not granted and locktype = 'transactionid'", row -> row.getInt(1)).orElse(0) > 0);
            // Longer than the pool lets a borrower wait (10 s): time itself is the condition here.
            Thread.sleep(11_000);
            locker.rollback();

            assertEquals(List.of(), batch.get(30, java.util.concurrent.TimeUnit.SECONDS), "neither job failed");
        }
        for (RunJob job : jobs) {
            fixture.awaitRun(job.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        }
    }

    private static RunJob runJob(PipelineFixture.Integration integration) {
        return new RunJob(UUID.randomUUID(), integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                dev.runner.integration.Direction.INBOUND, Trigger.MANUAL, null);
    }

    @Test
    @Timeout(40)
    void aFetchWhoseBodyStallsEndsBeforeTheInvocationDoes() {
        var integration = fixture.integration(true);
        try (HostileHandler hostile = HostileHandler.start()) {
            // The handler's own timeout is a minute away; the invocation has 13 s, of which the run time reserve keeps 10 s.
            ObjectNode type = Json.object().put("name", "stalling fetch");
            ObjectNode spec = type.putObject("handlers").putObject(integration.handlerKey());
            spec.put("url", hostile.url("stall-fetch", new HostileHandler.Act.StallAfterHeaders(200, 1000)))
                    .put("direction", "inbound").put("batch", true);
            spec.putObject("configs").put("timeout_ms", 60_000);
            assertEquals(200, fixture.api("PUT", "/types/" + integration.integrationKey(), type).status());
            var job = new dev.runner.run.RunJob(UUID.randomUUID(), integration.tenantId(), integration.integrationKey(),
                    integration.handlerKey(), dev.runner.integration.Direction.INBOUND, Trigger.MANUAL, null);
            fixture.runner.database().inTransaction(connection -> fixture.runner.runStore().insert(connection, job, RunStatus.QUEUED, null));
            var message = new dev.runner.queue.QueueMessage("m-stall", Json.write(job.toJson()), "rh", 1, "runs-manual", Map.of());
            long deadline = System.currentTimeMillis() + 13_000;

            List<String> failed = fixture.runner.runWorker().process(List.of(message), () -> deadline - System.currentTimeMillis());

            assertTrue(System.currentTimeMillis() < deadline, "the fetch ended before the invocation did");
            assertEquals(List.of("m-stall"), failed, "a timed-out fetch is retried");
        }
    }

    @Test
    void aFetchShortOfTimeGoesOnInANewMessage() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(3, 4);
        // A worker with almost no time left fetches one page, then hands the cursor on.
        var job = new dev.runner.run.RunJob(UUID.randomUUID(), integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                dev.runner.integration.Direction.INBOUND, dev.runner.trigger.Trigger.MANUAL, null);
        fixture.runner.database().inTransaction(connection -> fixture.runner.runStore().insert(connection, job, RunStatus.QUEUED, null));
        var message = new dev.runner.queue.QueueMessage("m-1", Json.write(job.toJson()), "rh", 1, "runs-manual", Map.of());

        List<String> failed = fixture.runner.runWorker().process(List.of(message), () -> 0L);

        assertTrue(failed.isEmpty());
        assertEquals(1, fixture.handlers.calls(integration.handlerKey()).stream().filter(c -> c.operation().equals("fetch")).count(),
                "one page, then a continuation message");
        Run run = fixture.awaitRun(job.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(12L, fixture.runner.itemQueries().countByStatus(run.runId()).get(ItemStatus.SUCCEEDED));
        assertEquals(List.of("null", "1", "2"), fixture.handlers.calls(integration.handlerKey()).stream()
                .filter(c -> c.operation().equals("fetch")).map(c -> c.body().path("cursor").asText("null")).toList());
    }

    private List<Run> runsOf(String tenantId) {
        return fixture.runner.database().query("select run_id from runs where tenant_id = ? order by created_at",
                row -> fixture.runner.runStore().find(row.getObject(1, UUID.class)).orElseThrow(), tenantId);
    }

    private UUID webhookRun(PipelineFixture.Integration integration, String body) {
        var response = fixture.webhook(fixture.webhookEvent(integration, body));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }

    private static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
