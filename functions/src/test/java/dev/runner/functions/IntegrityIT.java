package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.cost.CostTracker;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.pipeline.RunService;
import dev.runner.pipeline.Scheduler;
import dev.runner.run.Run;
import dev.runner.run.RunJob;
import dev.runner.run.RunStatus;
import dev.runner.store.Database;
import dev.runner.testing.FakeHandler;
import dev.runner.testing.HostileHandler;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Nothing lost, nothing stuck, nothing done twice (issue 7): each test names a path that lost or
 * duplicated work before and shows it now holds. Real servers; a pool of two connections so a
 * path that holds one while asking for another shows up as a stall.
 */
class IntegrityIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of(
            "RUNNER_DATABASE_POOL_SIZE", "2",
            "RUNNER_SWEEP_ITEMS_OVERDUE_S", "60",
            "RUNNER_SWEEP_RUNS_OVERDUE_S", "60",
            "RUNNER_SWEEP_COMPLETION_QUIET_S", "1",
            "RUNNER_WEBHOOK_DEDUP_S", "60",
            "RUNNER_WEBHOOK_TOLERANCE_S", "60", // never more than the dedup window (RunnerConfig refuses that)
            // A dead worker's claim frees in a second: what a crash leaves is claimable again within the test.
            "RUNNER_ITEM_CLAIM_LEASE_MS", "1000"));

    @Test
    void fortyConcurrentRunRequestsAreAllAcceptedByATwoConnectionPool() throws Exception {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 1);
        ObjectNode body = Json.object().put("tenantId", integration.tenantId()).put("integrationKey", integration.integrationKey())
                .put("handlerKey", integration.handlerKey());
        List<Callable<ApiResponse>> requests = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            requests.add(() -> fixture.api("POST", "/runs", body));
        }
        List<Integer> statuses = new ArrayList<>();
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Future<ApiResponse> answer : threads.invokeAll(requests)) {
                statuses.add(answer.get().status());
            }
        }
        assertEquals(List.of(202), statuses.stream().distinct().toList(), "every answer: " + statuses);
    }

    @Test
    void aRunWhoseCompletionWasLostIsCompletedByTheNextTick() {
        var integration = fixture.integration(true);
        UUID runId = storedRun(integration, 3);
        // The items ended but the completion after them never ran (a crash, a failed send before it).
        fixture.runner.database().update("update execution_items set status = 'succeeded', finished_at = now() where run_id = ?", runId);
        fixture.runner.database().update("update runs set updated_at = now() - interval '1 minute' where run_id = ?", runId);

        Scheduler.Tick tick = fixture.runner.scheduler().tick(Instant.now());

        assertTrue(tick.runsCompleted() >= 1, "tick: " + tick);
        assertEquals(RunStatus.COMPLETED, fixture.runner.runStore().find(runId).orElseThrow().status());
    }

    /**
     * Two workers end the two items of a run, each record's check made while the other's end is not yet committed (held
     * so: each commit waits on a lock the test holds until both records have run). Neither record can see the run whole,
     * so neither ends it; the check each worker makes once its own has committed does (the later one sees both).
     */
    @Test
    void aRunWhoseLastItemsTwoWorkersEndAtOnceCompletesWithoutTheSweep() throws Exception {
        var integration = fixture.integration(true);
        UUID runId = storedRun(integration, 2);
        List<ItemJob> jobs = fixture.runner.itemStore().queued(itemIds(runId));
        String hold = "hold_" + runId.toString().replace("-", "");
        fixture.runner.database().update("""
                create function %s() returns trigger language plpgsql as $$
                begin perform pg_advisory_xact_lock_shared(4711); return null; end $$
                """.formatted(hold));
        fixture.runner.database().update("""
                create constraint trigger %1$s after update on execution_items deferrable initially deferred for each row
                when (new.run_id = '%2$s' and new.status = 'succeeded') execute function %1$s()
                """.formatted(hold, runId));
        // The test's own connections: the workers' pool is theirs. The lock's goes first, so a failure releases the workers.
        try (var workers = Executors.newFixedThreadPool(2);
             var watcher = Database.connect(fixture.stack.config().database(), 2, CostTracker.NONE);
             var lock = watcher.dataSource().getConnection()) {
            lock.setAutoCommit(false);
            lock.createStatement().execute("select pg_advisory_xact_lock(4711)");
            List<Future<SQSBatchResponse>> batches = new ArrayList<>();
            for (ItemJob job : jobs) {
                batches.add(workers.submit(() -> Lambda.sqs(new ItemWorkerFunction(fixture.runner), ItemWorkerCostIT.batch(List.of(job)),
                        TestContext.of("items", 60_000))));
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> watcher.query(
                    "select count(*) from pg_locks where locktype = 'advisory' and objid = 4711 and not granted", row -> row.getLong(1))
                    .getFirst() == 2);
            assertEquals(List.of("running"), watcher.query("select status from runs where run_id = ?", row -> row.getString(1), runId));
            lock.commit();
            for (Future<SQSBatchResponse> batch : batches) {
                assertTrue(batch.get().getBatchItemFailures().isEmpty());
            }
        } finally {
            fixture.runner.database().update("drop trigger %s on execution_items".formatted(hold));
            fixture.runner.database().update("drop function %s()".formatted(hold));
        }

        assertEquals(RunStatus.COMPLETED, fixture.runner.runStore().find(runId).orElseThrow().status());
    }

    /**
     * The accept's statement fails part-way (Postgres refusing the owed send's row, as a failover would cut it): nothing
     * of the delivery is kept, not even its identity, so the sender's retry is taken as new and processed once.
     */
    @Test
    void aWebhookWhoseAcceptFailsInPostgresLeavesNoTraceAndItsRetryIsProcessedOnce() {
        var integration = fixture.integration(true);
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"cut\"}");
        String trigger = "cut_" + integration.tenantId().replaceAll("[^A-Za-z0-9]", "_");
        fixture.runner.database().update("""
                create function %s() returns trigger language plpgsql as $$
                begin raise exception 'cut for the test' using errcode = '57P01'; end $$
                """.formatted(trigger));
        fixture.runner.database().update("create trigger %s before insert on pending_sends for each row execute function %s()"
                .formatted(trigger, trigger));
        APIGatewayV2HTTPResponse failed;
        try {
            failed = fixture.webhook(event);
        } finally {
            fixture.runner.database().update("drop trigger %s on pending_sends".formatted(trigger));
            fixture.runner.database().update("drop function %s()".formatted(trigger));
        }
        assertEquals(503, failed.getStatusCode(), failed.getBody());
        assertEquals(List.of(0L, 0L, 0L), List.of(count("delivery_ids", integration), count("runs", integration),
                count("execution_items", integration)), "deliveries, runs, items");

        APIGatewayV2HTTPResponse retried = fixture.webhook(event);

        assertEquals(202, retried.getStatusCode(), retried.getBody());
        UUID runId = UUID.fromString(Json.parse(retried.getBody()).path("runId").asText());
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(1, fixture.handlers.itemCalls(integration.handlerKey()).size());
    }

    @Test
    void theSweepResendsOnlyItemsWhoseMessageIsOverdue() {
        var integration = fixture.integration(true);
        UUID runId = storedRun(integration, 2);
        List<UUID> items = itemIds(runId);
        UUID deferred = items.get(0);
        UUID lost = items.get(1);
        // One waits for a deferral that ends in ten minutes (a throttled tenant); the other's send was lost half an hour ago.
        fixture.runner.database().update("""
                update execution_items set updated_at = now() - interval '30 minutes',
                    next_visible_at = case when item_id = ? then now() + interval '10 minutes' else null end
                where run_id = ?""", deferred, runId);

        // A tier with a visible backlog is left alone this tick (its messages may just be waiting), and the
        // suite's other classes share this database: tick until the lost item has been sent and processed.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250)).until(() -> {
            fixture.runner.scheduler().tick(Instant.now());
            return status(lost) == ItemStatus.SUCCEEDED;
        });

        assertEquals(ItemStatus.QUEUED, status(deferred), "a deferred item's message is alive: not re-sent");
        assertEquals(1, fixture.handlers.itemCalls(integration.handlerKey()).size(),
                "only the lost item reached the handler");
    }

    @Test
    void aDuplicateArrivingBeforeItsBackoffEndsDoesNotClaimTheItem() {
        var integration = fixture.integration(true);
        UUID runId = storedRun(integration, 1);
        UUID itemId = itemIds(runId).getFirst();
        fixture.runner.database().update("""
                update execution_items set status = 'retrying', attempts = 1, next_visible_at = now() + interval '1 minute'
                where item_id = ?""", itemId);

        var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), sqsEvent(job(runId, itemId, integration)),
                TestContext.of("items", 60_000));

        assertTrue(response.getBatchItemFailures().isEmpty());
        assertEquals(ItemStatus.RETRYING, status(itemId), "still waiting out its backoff");
        assertEquals(1, fixture.runner.database().queryOne("select attempts from execution_items where item_id = ?",
                row -> row.getInt(1), itemId).orElseThrow(), "no attempt used");
        assertTrue(fixture.handlers.itemCalls(integration.handlerKey()).isEmpty(), "the handler was not called");
    }

    @Test
    void copiesOfAnItemsMessageArrivingEarlyOneAfterAnotherDoNotKeepItFromComingDue() {
        var integration = fixture.integration(true);
        UUID runId = storedRun(integration, 1);
        UUID itemId = itemIds(runId).getFirst();
        ItemJob job = new ItemJob(runId, itemId, integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                handler(integration).direction(), Trigger.WEBHOOK, "x", 0, 0);
        fixture.runner.database().update("update execution_items set next_visible_at = now() + interval '1.5 seconds' where item_id = ?", itemId);

        // Three copies 0.7 s apart, each before the item is due (what the fault run met after redeliveries): each is sent
        // back for the due time. Were the due time rewritten by each, rounded up to whole seconds, every copy would find
        // it pushed past its return by the other two, forever.
        for (int copy = 0; copy < 3; copy++) {
            Lambda.sqs(new ItemWorkerFunction(fixture.runner), sqsEvent(job), TestContext.of("items", 60_000));
            LockSupport.parkNanos(Duration.ofMillis(700).toNanos());
        }

        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(15));
        assertEquals(1, fixture.handlers.timesProcessed(integration.handlerKey(), itemId.toString()), "called once for three copies");
    }

    @Test
    void aSecondRunJobLeavesARunAnotherWorkerIsFetching() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 2);
        UUID runId = fixture.runner.runService().startFetching(new RunService.Request(integration.tenantId(), integration.integrationKey(),
                integration.handlerKey(), Trigger.MANUAL));
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        long fetchesBefore = fetches(integration.handlerKey());
        // Another worker holds the fetch of a second run, whose RunJob is then delivered again (a sweep's or SQS's duplicate).
        RunJob job = fixture.runner.runService().prepareFetching(new RunService.Request(integration.tenantId(),
                integration.integrationKey(), integration.handlerKey(), Trigger.MANUAL));
        fixture.runner.database().inTransaction(connection -> fixture.runner.runService().insertQueued(connection, job, null));
        assertTrue(fixture.runner.runStore().startFetching(job.runId(), "worker-a", Duration.ofMinutes(5)).isPresent());

        Lambda.sqs(new RunWorkerFunction(fixture.runner), runJobEvent(job, "duplicate-message"), TestContext.of("runs", 120_000));

        assertEquals(fetchesBefore, fetches(integration.handlerKey()), "the duplicate did not fetch");
        assertEquals(RunStatus.FETCHING, fixture.runner.runStore().find(job.runId()).orElseThrow().status());
    }

    @Test
    void aSlowFetchDoesNotHoldBackTheOtherRunsOfItsBatch() {
        var slow = fixture.integration(true);
        var quick = fixture.integration(true);
        CountDownLatch quickFetched = new CountDownLatch(1);
        AtomicBoolean quickFetchedDuringSlow = new AtomicBoolean();
        // The slow handler answers only once the other run's fetch has arrived (or after 10 s): one at a time, it never would.
        fixture.handlers.handler(slow.handlerKey()).pages(1, 2).fetchStatus(() -> {
            quickFetchedDuringSlow.set(awaitQuietly(quickFetched, Duration.ofSeconds(10)));
            return 200;
        });
        fixture.handlers.handler(quick.handlerKey()).pages(1, 2).fetchStatus(() -> {
            quickFetched.countDown();
            return 200;
        });
        RunJob slowJob = queuedRun(slow);
        RunJob quickJob = queuedRun(quick);
        SQSEvent batch = runJobBatch(List.of(slowJob, quickJob), "slow-run-job", "quick-run-job");

        var response = Lambda.sqs(new RunWorkerFunction(fixture.runner), batch, TestContext.of("runs", 120_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), response.toString());
        assertTrue(quickFetchedDuringSlow.get(), "the second run of the batch was fetched while the first one's fetch was in flight");
        fixture.awaitRun(slowJob.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        fixture.awaitRun(quickJob.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
    }

    @Test
    void aHandlerWithAConcurrencyLimitGetsNoMoreOfABatchsFetchesAtOnce() {
        var integration = fixture.integration(true, Json.object().put("batch_size", 10).put("concurrency", 1));
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger mostInFlight = new AtomicInteger();
        CountDownLatch secondArrived = new CountDownLatch(2);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 2).fetchStatus(() -> {
            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            secondArrived.countDown();
            // Held until another fetch arrives, or 1 s: a second one in flight meanwhile would be seen.
            awaitQuietly(secondArrived, Duration.ofSeconds(1));
            inFlight.decrementAndGet();
            return 200;
        });
        RunJob first = queuedRun(integration);
        RunJob second = queuedRun(integration);
        SQSEvent batch = runJobBatch(List.of(first, second), "first-run-job", "second-run-job");

        var response = Lambda.sqs(new RunWorkerFunction(fixture.runner), batch, TestContext.of("runs", 120_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), response.toString());
        assertEquals(2, fetches(integration.handlerKey()));
        assertEquals(1, mostInFlight.get(), "concurrency 1: one fetch at a time");
    }

    @Test
    void aRunJobWhoseTurnComesTooLateInTheInvocationIsPutBackNotFetched() {
        var integration = fixture.integration(true, Json.object().put("batch_size", 10).put("concurrency", 1));
        // The first fetch outlasts the time the invocation can give it; the second waits for the handler's one slot meanwhile.
        fixture.handlers.handler(integration.handlerKey()).pages(1, 2).fetchStatus(() -> {
            LockSupport.parkNanos(Duration.ofMillis(2_500).toNanos());
            return 200;
        });
        RunJob first = queuedRun(integration);
        RunJob second = queuedRun(integration);
        SQSEvent batch = runJobBatch(List.of(first, second), "first-run-job", "second-run-job");
        long reserve = fixture.runner.config().runTimeReserve().toMillis();

        var response = Lambda.sqs(new RunWorkerFunction(fixture.runner), batch, TestContext.of("runs", reserve + 1_500));

        assertEquals(List.of("first-run-job", "second-run-job"),
                response.getBatchItemFailures().stream().map(f -> f.getItemIdentifier()).sorted().toList(),
                "the first timed out, the second came back without a fetch");
        assertEquals(1, fetches(integration.handlerKey()), "the second never called the handler");
    }

    @Test
    void aRunJobDeliveredTwiceInOneBatchIsFetchedOnce() {
        var integration = fixture.integration(true);
        CountDownLatch bothCould = new CountDownLatch(2);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 3).fetchStatus(() -> {
            bothCould.countDown();
            // Held briefly so that a second copy, were it fetching too, would be in flight meanwhile.
            awaitQuietly(bothCould, Duration.ofSeconds(1));
            return 200;
        });
        RunJob job = queuedRun(integration);
        SQSEvent batch = runJobBatch(List.of(job, job), "same-message", "same-message");

        var response = Lambda.sqs(new RunWorkerFunction(fixture.runner), batch, TestContext.of("runs", 120_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), response.toString());
        assertEquals(1, fetches(integration.handlerKey()), "one copy fetched");
        fixture.awaitRun(job.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(3, itemIds(job.runId()).size());
    }

    @Test
    void disablingAnIntegrationParksItsItemsAndEnablingItResumesThem() {
        var integration = fixture.integration(true);
        saveTenant(integration, false);
        HandlerSpec handler = handler(integration);
        RunService.Started started = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(),
                handler, Trigger.MANUAL, newItems(4), RunService.Keep.ALL);

        await().atMost(Duration.ofSeconds(20)).until(() -> fixture.runner.itemQueries().countByStatus(started.runId())
                .getOrDefault(ItemStatus.PARKED, 0L) == 4);
        assertTrue(fixture.handlers.itemCalls(integration.handlerKey()).isEmpty());

        saveTenant(integration, true);

        fixture.awaitRun(started.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
    }

    @Test
    void aHandlerJustAddedToACachedTypeIsNotTakenForUnknown() {
        var integration = fixture.integration(true);
        assertTrue(fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()).isPresent(), "type cached");
        String added = integration.handlerKey() + "-new";
        ObjectNode spec = Json.object().put("url", fixture.handlers.url(added)).put("direction", "inbound").put("batch", true);
        spec.putObject("configs").put("batch_size", 10);
        // Another process saved the type: this one's caches still hold the old one.
        fixture.runner.database().update("update integration_types set handlers = handlers || jsonb_build_object(?::text, ?::jsonb) where integration_key = ?",
                added, Json.write(spec), integration.integrationKey());
        HandlerSpec addedSpec = HandlerSpec.fromJson(added, spec);

        RunService.Started started = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(),
                addedSpec, Trigger.MANUAL, newItems(2), RunService.Keep.ALL);

        Run run = fixture.awaitRun(started.runId(), RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(RunStatus.COMPLETED, run.status(), "not completed_with_errors: no item went dead as unknown");
    }

    @Test
    void aPageOverTheLimitFailsTheRunAndSaysWhy() {
        var integration = fixture.integration(true);
        fixture.handlers.handler(integration.handlerKey()).pages(1, 1_001);

        UUID runId = fixture.runner.runService().startFetching(new RunService.Request(integration.tenantId(), integration.integrationKey(),
                integration.handlerKey(), Trigger.MANUAL));

        Run run = fixture.awaitRun(runId, RunStatus.FAILED, Duration.ofSeconds(20));
        assertTrue(run.error().contains("limit is 1000"), run.error());
        assertTrue(fixture.runner.itemQueries().countByStatus(runId).isEmpty(), "nothing of the page was stored");
    }

    @Test
    void theTickForgetsDeliveriesPastTheirWindow() {
        fixture.runner.database().update("""
                insert into delivery_ids (tenant_id, integration_key, delivery_id, kept_until)
                values ('old-tenant', 'crm', 'd-1', now() - interval '1 second'), ('old-tenant', 'crm', 'd-2', now() + interval '1 hour')""");

        fixture.runner.scheduler().tick(Instant.now());

        List<String> left = fixture.runner.database().query("select delivery_id from delivery_ids where tenant_id = 'old-tenant'",
                row -> row.getString(1));
        assertEquals(List.of("d-2"), left);
    }

    /**
     * webhook_deliveries is retired (V13) but the functions of the version before still write it during a rollout:
     * their statement, as they send it, finds every externalId new (the rule now) and leaves no row behind.
     */
    @Test
    void theRetiredItemDedupTableTellsTheVersionBeforeThatEveryItemIsNewAndKeepsNothing() {
        String previousVersionsStatement = """
                insert into webhook_deliveries (tenant_id, integration_key, handler_key, external_id)
                select ?, ?, ?, unnest(?::text[])
                on conflict (tenant_id, integration_key, handler_key, external_id) do update set received_at = now()
                    where webhook_deliveries.received_at < now() - make_interval(secs => ?)
                returning external_id
                """;
        for (int round = 0; round < 2; round++) {
            List<String> fresh = fixture.runner.database().query(previousVersionsStatement, row -> row.getString(1),
                    "rollout-tenant", "crm", "leads", Database.array("text", new String[] {"e-1", "e-2"}), 86400.0);
            assertEquals(List.of("e-1", "e-2"), fresh.stream().sorted().toList(), "round " + round);
        }
        assertEquals(List.of(0L), fixture.runner.database().query("select count(*) from webhook_deliveries", row -> row.getLong(1)));
    }

    @Test
    @Timeout(60)
    void aHandlerThatStallsItsBodyCannotKeepTheOtherHandlersOutcomesOfItsBatchFromBeingRecorded() {
        var good = fixture.integration(true);
        var stalling = fixture.integration(false);
        try (HostileHandler hostile = HostileHandler.start()) {
            // The second handler answers its headers, then never its body; its own timeout is far off (60 s).
            ObjectNode type = Json.object().put("name", "stalling");
            ObjectNode spec = type.putObject("handlers").putObject(stalling.handlerKey());
            spec.put("url", hostile.url("stall", new HostileHandler.Act.StallAfterHeaders(200, 1000)))
                    .put("direction", "inbound").put("batch", false);
            spec.putObject("configs").put("timeout_ms", 60_000);
            assertEquals(200, fixture.api("PUT", "/types/" + stalling.integrationKey(), type).status());
            UUID goodRun = storedRun(good, 2);
            UUID stalledRun = storedRun(stalling, 1);
            SQSEvent batch = new SQSEvent();
            List<SQSEvent.SQSMessage> records = new ArrayList<>();
            itemIds(goodRun).forEach(itemId -> records.add(sqsEvent(job(goodRun, itemId, good)).getRecords().getFirst()));
            UUID stalledItem = itemIds(stalledRun).getFirst();
            SQSEvent.SQSMessage stalledMessage = sqsEvent(job(stalledRun, stalledItem, stalling)).getRecords().getFirst();
            records.add(stalledMessage);
            batch.setRecords(records);

            long started = System.nanoTime();
            // 8 s left: calls must end by then less the 5 s kept for recording.
            var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), batch, TestContext.of("items", 8_000));
            Duration took = Duration.ofNanos(System.nanoTime() - started);

            assertTrue(took.compareTo(Duration.ofSeconds(8)) < 0, "settled within the invocation: " + took);
            assertTrue(response.getBatchItemFailures().isEmpty(), "the stalled item goes again in a message of its own: " + response);
            itemIds(goodRun).forEach(itemId -> assertEquals(ItemStatus.SUCCEEDED, status(itemId)));
            assertEquals(ItemStatus.RETRYING, status(stalledItem), "the stalled call is a retryable failure of its own item");
        }
    }

    @Test
    void anItemWhoseWorkerDiedOnItsLastAttemptIsDeadAfterTheLeaseWithoutAnotherCall() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 503);
        UUID runId = storedRun(integration, 1);
        UUID itemId = itemIds(runId).getFirst();
        int maxAttempts = fixture.runner.config().retry().maxAttempts();
        // Every attempt but the last one used: the next claim is its last attempt.
        fixture.runner.database().update("update execution_items set status = 'retrying', attempts = ? where item_id = ?",
                maxAttempts - 1, itemId);
        SQSEvent delivery = sqsEvent(job(runId, itemId, integration));

        // The first worker calls the handler for the last attempt, then dies before recording anything: SQS refuses
        // its hand-off to a DLQ that does not exist, so the invocation fails and its message is not acknowledged.
        RuntimeException died;
        try (Runner dying = fixture.root(Map.of("RUNNER_QUEUE_ITEMS_DLQ", fixture.stack.url("items-dlq") + "-gone"))) {
            var dyingWorker = new ItemWorkerFunction(dying);
            died = assertThrows(RuntimeException.class, () -> Lambda.sqs(dyingWorker, delivery, TestContext.of("items", 60_000)));
        }
        List<FakeHandler.Call> calls = fixture.handlers.itemCalls(integration.handlerKey());
        assertEquals(1, calls.size(), "the handler saw the last attempt's call before the worker died of " + died);
        assertEquals(maxAttempts, FakeHandler.items(calls.getFirst()).getFirst().path("attempt").asInt());
        assertEquals(ItemStatus.PROCESSING, status(itemId), "claimed, nothing recorded");

        // The message comes back once the claim's lease has passed (in AWS its visibility timeout outlasts the lease).
        Duration lease = fixture.runner.config().itemClaimLease();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> fixture.runner.database().queryOne(
                "select claimed_at < now() - make_interval(secs => ?) from execution_items where item_id = ?",
                row -> row.getBoolean(1), lease.toMillis() / 1000.0, itemId).orElseThrow());
        delivery.getRecords().getFirst().getAttributes().put("ApproximateReceiveCount", "2");
        var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), delivery, TestContext.of("items", 60_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), "handed to the DLQ, so acknowledged");
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(20));
        assertEquals(ItemStatus.DEAD, status(itemId));
        assertEquals(1, fixture.handlers.timesProcessed(integration.handlerKey(), itemId.toString()), "no call past the last attempt");
        JsonNode counts = Json.parse(fixture.api("GET", "/runs/" + runId, null).body()).path("counts");
        assertEquals(1, counts.path("dead").asInt(), counts.toString());
        JsonNode item = Json.parse(fixture.api("GET", "/items/" + itemId, null).body());
        assertEquals("dead", item.path("status").asText(), item.toString());
        assertTrue(item.path("dlqAt").isTextual(), "dlq_at stamped: " + item);
        String reason = "no attempt left after its worker stopped mid-call";
        assertEquals(reason, item.path("lastError").asText(), item.toString());
        JsonNode lastEntry = item.path("history").path(item.path("history").size() - 1);
        assertEquals(reason, lastEntry.path("error").asText(), item.toString());
        // The reclaim counted an attempt no call used: given back, so the item shows the attempts it had.
        assertEquals(maxAttempts, item.path("attempts").asInt(), item.toString());
        assertEquals(maxAttempts, lastEntry.path("attempt").asInt(), item.toString());
    }

    // ------------------------------------------------------------------ helpers

    private static long count(String table, PipelineFixture.Integration integration) {
        return fixture.runner.database().query("select count(*) from " + table + " where tenant_id = ?", row -> row.getLong(1),
                integration.tenantId()).getFirst();
    }

    /** A running run with {@code n} stored items and no message sent for them: what a lost send leaves. */
    @Test
    void aPackedMessageIsTakenAsAGroupAndItsFailingItemGoesAgainAloneWithoutItsNeighbours() {
        var integration = fixture.integration(false);
        List<ItemJob> jobs = storedJobs(integration, 5);
        String failsOnce = jobs.get(2).itemId().toString();
        AtomicBoolean failed = new AtomicBoolean();
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item ->
                item.path("itemId").asText().equals(failsOnce) && failed.compareAndSet(false, true) ? 503 : 200);

        var response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), packedEvent(jobs), TestContext.of("items", 60_000));

        assertTrue(response.getBatchItemFailures().isEmpty(), "the pack is acknowledged; its retry travels alone: " + response);
        awaitItem(jobs.get(2).itemId(), ItemStatus.SUCCEEDED);
        for (ItemJob job : jobs) {
            assertEquals(job == jobs.get(2) ? 2 : 1, fixture.handlers.timesProcessed(integration.handlerKey(), job.itemId().toString()),
                    "called once each, the failed item twice: " + job.externalId());
            assertEquals(ItemStatus.SUCCEEDED, status(job.itemId()));
        }
        assertEquals(2, fixture.runner.database().queryOne("select attempts from execution_items where item_id = ?",
                row -> row.getInt(1), jobs.get(2).itemId()).orElseThrow(), "its own attempts only");
    }

    @Test
    void aPackTheItemsQueueGaveUpOnIsStampedDeadItemByItemBesideAOneItemHandOff() {
        var integration = fixture.integration(true);
        List<ItemJob> jobs = storedJobs(integration, 4);
        SQSEvent dlq = Events.load("sqs-dlq.json", SQSEvent.class);
        SQSEvent.SQSMessage pack = dlq.getRecords().getFirst();
        pack.setEventSourceArn(fixture.stack.arn("items-dlq"));
        // What maxReceiveCount moves there: the pack as it was sent, no error of the worker's.
        pack.setBody(dev.runner.item.ItemMessage.write(jobs.subList(0, 3)));
        var handOff = new SQSEvent.SQSMessage();
        handOff.setMessageId(UUID.randomUUID().toString());
        handOff.setEventSourceArn(fixture.stack.arn("items-dlq"));
        handOff.setAttributes(pack.getAttributes());
        handOff.setBody(Json.write(jobs.get(3).toJson().put("error", "handler answered 422")));
        dlq.setRecords(List.of(pack, handOff));

        // Each item's state decides, not the pack: out of attempts (its worker stopped mid-call on the last one) and handed
        // off die; one never claimed lives on for its live message or the sweep (a dead letter kills only its own end).
        var db = fixture.runner.database();
        db.update("update execution_items set status = 'processing', attempts = 3, claimed_at = now() - interval '1 day' where item_id = ?",
                jobs.get(0).itemId());
        db.update("update execution_items set status = 'processing', attempts = 1, claimed_at = 'infinity' where item_id = any(?)",
                dev.runner.store.Database.array("uuid", new UUID[] {jobs.get(1).itemId(), jobs.get(3).itemId()}));

        Lambda.sqs(new DeadLetterFunction(fixture.runner), dlq, TestContext.of("dlq", 30_000));

        for (ItemJob job : List.of(jobs.get(0), jobs.get(1), jobs.get(3))) {
            JsonNode item = Json.parse(fixture.api("GET", "/items/" + job.itemId(), null).body());
            assertEquals("dead", item.path("status").asText(), item.toString());
            assertTrue(item.path("dlqAt").isTextual(), "dlq_at stamped per item: " + item);
        }
        assertEquals("queued", Json.parse(fixture.api("GET", "/items/" + jobs.get(2).itemId(), null).body()).path("status").asText(),
                "an item of the pack that was never claimed is not dead");
        assertEquals("handler answered 422", Json.parse(fixture.api("GET", "/items/" + jobs.get(3).itemId(), null).body()).path("lastError").asText());
    }

    private static UUID storedRun(PipelineFixture.Integration integration, int n) {
        UUID runId = runningRun(integration);
        fixture.runner.database().inTransaction(connection -> fixture.runner.itemStore().insert(connection, ref(runId, integration), newItems(n)));
        return runId;
    }

    /** Items stored for a running run, as the fan-out leaves them, whose messages the test delivers itself. */
    private static List<ItemJob> storedJobs(PipelineFixture.Integration integration, int n) {
        UUID runId = runningRun(integration);
        return fixture.runner.database().inTransaction(connection -> fixture.runner.itemStore().insert(connection, ref(runId, integration),
                newItems(n)));
    }

    private static UUID runningRun(PipelineFixture.Integration integration) {
        RunService.Started started = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(),
                handler(integration), Trigger.MANUAL, List.of(), RunService.Keep.ALL);
        fixture.runner.database().update("update runs set status = 'running', finished_at = null where run_id = ?", started.runId());
        return started.runId();
    }

    private static dev.runner.run.RunRef ref(UUID runId, PipelineFixture.Integration integration) {
        return new RunJob(runId, integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                handler(integration).direction(), Trigger.MANUAL, null).ref();
    }

    /** One message carrying every job, as the fan-out packs a page. */
    private static SQSEvent packedEvent(List<ItemJob> jobs) {
        SQSEvent event = Events.load("sqs-item-job.json", SQSEvent.class);
        SQSEvent.SQSMessage record = event.getRecords().getFirst();
        record.setMessageId(UUID.randomUUID().toString());
        record.setBody(dev.runner.item.ItemMessage.write(jobs));
        return event;
    }

    private static List<ItemStore.NewItem> newItems(int n) {
        return IntStream.range(0, n).mapToObj(i -> new ItemStore.NewItem("x-" + UUID.randomUUID(), Json.object().put("i", i))).toList();
    }

    private static HandlerSpec handler(PipelineFixture.Integration integration) {
        return fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()).orElseThrow();
    }

    private static List<UUID> itemIds(UUID runId) {
        return fixture.runner.database().query("select item_id from execution_items where run_id = ? order by item_id",
                row -> row.getObject(1, UUID.class), runId);
    }

    private static ItemStatus status(UUID itemId) {
        return fixture.runner.database().queryOne("select status from execution_items where item_id = ?",
                row -> ItemStatus.fromWire(row.getString(1)), itemId).orElseThrow();
    }

    private static void awaitItem(UUID itemId, ItemStatus status) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> status(itemId) == status);
    }

    private static long fetches(String handlerKey) {
        return fixture.handlers.calls(handlerKey).stream().filter(c -> c.operation().equals("fetch")).count();
    }

    private static void saveTenant(PipelineFixture.Integration integration, boolean enabled) {
        ObjectNode tenant = Json.object().put("enabled", enabled);
        ApiResponse response = fixture.api("PUT", "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey(), tenant);
        assertEquals(200, response.status(), response.body());
    }

    private static ItemJob job(UUID runId, UUID itemId, PipelineFixture.Integration integration) {
        return new ItemJob(runId, itemId, integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                handler(integration).direction(), Trigger.MANUAL, "x", 1, 0);
    }

    private static SQSEvent sqsEvent(ItemJob job) {
        SQSEvent event = Events.load("sqs-item-job.json", SQSEvent.class);
        SQSEvent.SQSMessage record = event.getRecords().getFirst();
        record.setMessageId(UUID.randomUUID().toString());
        record.setBody(Json.write(job.toJson()));
        return event;
    }

    /** A run queued for fetching, as POST /runs leaves it, whose RunJob the test delivers itself. */
    private static RunJob queuedRun(PipelineFixture.Integration integration) {
        RunJob job = fixture.runner.runService().prepareFetching(new RunService.Request(integration.tenantId(),
                integration.integrationKey(), integration.handlerKey(), Trigger.MANUAL));
        fixture.runner.database().inTransaction(connection -> fixture.runner.runService().insertQueued(connection, job, null));
        return job;
    }

    /** One event carrying these RunJobs, the i-th under the i-th message id. */
    private static SQSEvent runJobBatch(List<RunJob> jobs, String... messageIds) {
        SQSEvent batch = runJobEvent(jobs.getFirst(), messageIds[0]);
        for (int i = 1; i < jobs.size(); i++) {
            batch.getRecords().addAll(runJobEvent(jobs.get(i), messageIds[i]).getRecords());
        }
        return batch;
    }

    /** A handler's stand-in waiting for the test's signal: whether it came in time. */
    private static boolean awaitQuietly(CountDownLatch latch, Duration wait) {
        try {
            return latch.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static SQSEvent runJobEvent(RunJob job, String messageId) {
        SQSEvent event = Events.load("sqs-run-job.json", SQSEvent.class);
        SQSEvent.SQSMessage record = event.getRecords().getFirst();
        record.setMessageId(messageId);
        record.setBody(Json.write(job.toJson()));
        return event;
    }
}
