package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import dev.runner.cost.CostMeter;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.pipeline.RunService;
import dev.runner.run.RunRef;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A concurrency-limited handler at its limit (issue 9): a batch's items beyond the free leases
 * run through the leases' lanes in the same invocation, and a batch that finds no lease free waits
 * for the one expected back, instead of being sent back to SQS to wait.
 */
class LanesIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_LANE_WAIT_MS", "5000"));

    @Test
    void tenItemsOfAHandlerLimitedToTwoCallsAreAllCalledInOneInvocation() {
        var integration = fixture.integration(false, Json.object().put("concurrency", 2));
        List<ItemJob> jobs = stored(integration, 10);
        CostMeter.Costs before = fixture.costs.snapshot();

        SQSBatchResponse response = Lambda.sqs(new ItemWorkerFunction(fixture.runner), ItemWorkerCostIT.batch(jobs),
                TestContext.of("items", 60_000));

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertEquals(10, used.handlerCalls(), "every item called, none sent back to wait");
        assertEquals(0, used.sqsRequests(), "no deferral re-send");
        jobs.forEach(job -> assertEquals(ItemStatus.SUCCEEDED, status(job.itemId())));
    }

    @Test
    void aBatchThatFindsNoLeaseFreeWaitsForTheOneExpectedBack() throws Exception {
        var integration = fixture.integration(false, Json.object().put("concurrency", 1));
        List<ItemJob> first = stored(integration, 5);
        List<ItemJob> second = stored(integration, 5);
        CostMeter.Costs before = fixture.costs.snapshot();
        var worker = new ItemWorkerFunction(fixture.runner);

        List<Callable<SQSBatchResponse>> invocations = List.of(
                () -> Lambda.sqs(worker, ItemWorkerCostIT.batch(first), TestContext.of("items", 60_000)),
                () -> Lambda.sqs(worker, ItemWorkerCostIT.batch(second), TestContext.of("items", 60_000)));
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Future<SQSBatchResponse> answer : threads.invokeAll(invocations)) {
                assertTrue(answer.get().getBatchItemFailures().isEmpty());
            }
        }

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        assertEquals(10, used.handlerCalls());
        assertEquals(0, used.sqsRequests(), "the second batch waited in its invocation: no deferral re-send");
        IntStream.range(0, 5).forEach(i -> {
            assertEquals(ItemStatus.SUCCEEDED, status(first.get(i).itemId()));
            assertEquals(ItemStatus.SUCCEEDED, status(second.get(i).itemId()));
        });
    }

    private static List<ItemJob> stored(PipelineFixture.Integration integration, int n) {
        var handler = fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()).orElseThrow();
        List<ItemStore.NewItem> items = IntStream.range(0, n)
                .mapToObj(i -> new ItemStore.NewItem("lane-" + UUID.randomUUID(), Json.object().put("i", i))).toList();
        // Stored, not sent: the test plays the event source with hand-made batches.
        var started = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(), handler,
                Trigger.MANUAL, List.of(), RunService.Keep.ALL);
        fixture.runner.database().update("update runs set status = 'running', finished_at = null where run_id = ?", started.runId());
        var run = new RunRef(started.runId(), integration.tenantId(), integration.integrationKey(),
                integration.handlerKey(), handler.direction(), Trigger.MANUAL);
        return new ArrayList<>(fixture.runner.database().inTransaction(connection -> fixture.runner.itemStore().insert(connection, run, items)));
    }

    private static ItemStatus status(UUID itemId) {
        return fixture.runner.database().queryOne("select status from execution_items where item_id = ?",
                row -> ItemStatus.fromWire(row.getString(1)), itemId).orElseThrow();
    }
}
