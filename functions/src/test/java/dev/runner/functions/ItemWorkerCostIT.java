package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.cost.CostMeter;
import dev.runner.delivery.DeliveryStore;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.pipeline.RunService;
import dev.runner.run.RunRef;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What one 10-item batch, and one batch of packed messages, costs the item worker when every item
 * succeeds, counted on the real clients: Postgres statements, handler calls, SQS requests, Redis
 * round trips. The figures the README states.
 */
class ItemWorkerCostIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void aTenItemBatchCostsAtMostFourStatementsOneHandlerCallOneRedisRoundTripAndNoSqsRequest() {
        var integration = fixture.integration(true);
        // Stored directly, not sent: this test plays the event source with one hand-made batch.
        List<ItemJob> jobs = stored(integration, 20);
        UUID runId = jobs.getFirst().runId();
        var function = new ItemWorkerFunction(fixture.runner);
        // A first batch loads the Redis scripts and warms the caches: the bill is the steady state's.
        Lambda.sqs(function, batch(jobs.subList(0, 10)), TestContext.of("items", 60_000));
        SQSEvent event = batch(jobs.subList(10, 20));
        fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey()); // types cache warm, as in steady state
        CostMeter.Costs before = fixture.costs.snapshot();

        var response = Lambda.sqs(function, event, TestContext.of("items", 60_000));

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        System.out.printf("item worker, 10-item batch, all succeed: %d Postgres statements, %d handler calls, %d SQS requests, %d Redis round trips%n",
                used.sqlStatements(), used.handlerCalls(), used.sqsRequests(), used.redisRoundTrips());
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertTrue(used.sqlStatements() <= 4, "statements: " + used.sqlStatements());
        assertEquals(1, used.handlerCalls(), "one /process-batch call");
        assertEquals(0, used.sqsRequests(), "receive and delete belong to the event source");
        assertEquals(1, used.redisRoundTrips(), "admission only: successes on a clean breaker need no report");
        assertEquals("completed", fixture.runner.runStore().find(runId).orElseThrow().status().wireName());
    }

    @Test
    void aBatchOfPackedMessagesCostsWhatOneBatchCostsWhateverItsItems() {
        // Configured as W1's (the reference's): a concurrency limit, so the batch is one wave (an unlimited handler's waves hold 20 items).
        var integration = fixture.integration(true, Json.object().put("batch_size", 10).put("concurrency", 50));
        var handler = fixture.runner.runService().requireHandler(integration.tenantId(), integration.integrationKey(), integration.handlerKey());
        int perMessage = 50;
        List<ItemJob> jobs = stored(integration, 4 * perMessage);
        UUID runId = jobs.getFirst().runId();
        var function = new ItemWorkerFunction(fixture.runner);
        Lambda.sqs(function, packed(jobs.subList(0, 2 * perMessage), perMessage), TestContext.of("items", 60_000));
        fixture.runner.integrations().handler(integration.integrationKey(), integration.handlerKey());
        CostMeter.Costs before = fixture.costs.snapshot();

        var response = Lambda.sqs(function, packed(jobs.subList(2 * perMessage, 4 * perMessage), perMessage), TestContext.of("items", 60_000));

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        int batchSize = handler.configs().batchSize();
        System.out.printf("item worker, 2 packed messages of %d items (batch_size %d), all succeed: %d Postgres statements, %d handler calls,"
                        + " %d SQS requests, %d Redis round trips; per item %.3f statements, %.3f handler calls%n", perMessage, batchSize,
                used.sqlStatements(), used.handlerCalls(), used.sqsRequests(), used.redisRoundTrips(),
                used.sqlStatements() / (2.0 * perMessage), used.handlerCalls() / (2.0 * perMessage));
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertTrue(used.sqlStatements() <= 4, "the same statements as a 10-item batch: " + used.sqlStatements());
        assertEquals(Math.ceilDiv(2 * perMessage, batchSize), used.handlerCalls(), "one /process-batch call per batch_size items");
        assertEquals(0, used.sqsRequests(), "receive and delete belong to the event source");
        assertTrue(used.redisRoundTrips() <= 1 + used.handlerCalls(),
                "admission, then a lease given back by each lane as it runs out of calls: " + used.redisRoundTrips());
        assertEquals("completed", fixture.runner.runStore().find(runId).orElseThrow().status().wireName());
    }

    /** {@code n} items of a running manual run, stored as the fan-out stores them. */
    private static List<ItemJob> stored(PipelineFixture.Integration integration, int n) {
        var handler = fixture.runner.runService().requireHandler(integration.tenantId(), integration.integrationKey(), integration.handlerKey());
        List<ItemStore.NewItem> items = IntStream.range(0, n).mapToObj(i -> new ItemStore.NewItem("cost-" + i, Json.object().put("i", i))).toList();
        RunService.Started run = fixture.runner.runService().startWithItems(integration.tenantId(), integration.integrationKey(),
                handler, Trigger.MANUAL, List.of(), RunService.Keep.ALL);
        List<ItemJob> jobs = fixture.runner.database().inTransaction(connection -> fixture.runner.itemStore().insert(connection,
                new RunRef(run.runId(), integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                        Direction.INBOUND, Trigger.MANUAL), items));
        fixture.runner.database().update("update runs set status = 'running', finished_at = null where run_id = ?", run.runId());
        return jobs;
    }

    /** The jobs in messages of {@code perMessage} items each, as the fan-out packs a page. */
    static SQSEvent packed(List<ItemJob> jobs, int perMessage) {
        SQSEvent event = batch(jobs.subList(0, 1));
        SQSEvent.SQSMessage template = event.getRecords().getFirst();
        List<SQSEvent.SQSMessage> records = new ArrayList<>();
        for (int from = 0; from < jobs.size(); from += perMessage) {
            List<ItemJob> pack = jobs.subList(from, Math.min(jobs.size(), from + perMessage));
            var record = new SQSEvent.SQSMessage();
            record.setMessageId(pack.getFirst().itemId().toString());
            record.setReceiptHandle("rh-" + pack.getFirst().itemId());
            record.setBody(ItemMessage.write(pack));
            record.setAttributes(template.getAttributes());
            record.setEventSourceArn(template.getEventSourceArn());
            records.add(record);
        }
        event.setRecords(records);
        return event;
    }

    /**
     * Event items: a batch of ten webhooks' items, each its own run of one item. Claim and record are
     * one statement each for the batch whatever the runs, and each run is completed by the record itself: no
     * completion statement of its own.
     */
    @Test
    void aBatchOfTenOneItemRunsCostsTwoStatementsAndCompletesEveryRun() {
        var integration = fixture.integration(true);
        List<ItemJob> warm = oneItemRuns(integration, 10);
        var function = new ItemWorkerFunction(fixture.runner);
        Lambda.sqs(function, batch(warm), TestContext.of("items", 60_000));
        List<ItemJob> jobs = oneItemRuns(integration, 10);
        CostMeter.Costs before = fixture.costs.snapshot();

        var response = Lambda.sqs(function, batch(jobs), TestContext.of("items", 60_000));

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        System.out.printf("item worker, 10 one-item runs: %d Postgres statements, %d handler calls, %d Redis round trips%n",
                used.sqlStatements(), used.handlerCalls(), used.redisRoundTrips());
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertEquals(2, used.sqlStatements(), "claim, and record with the runs' completion");
        for (ItemJob job : jobs) {
            assertEquals("completed", fixture.runner.runStore().find(job.runId()).orElseThrow().status().wireName());
        }
    }

    /**
     * Ten tenants' one-item runs in one batch, none of their tenant integrations cached yet: the worker reads them with
     * one statement for the batch (is any disabled?), then claims and records: three statements, not one per tenant.
     */
    @Test
    void aBatchOfTenTenantsItemsReadsTheirTenantIntegrationsWithOneStatement() {
        List<PipelineFixture.Integration> tenants = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tenants.add(fixture.integration(true));
        }
        var function = new ItemWorkerFunction(fixture.runner);
        List<ItemJob> warm = new ArrayList<>();
        tenants.forEach(tenant -> warm.addAll(oneItemRuns(tenant, 1)));
        // A first batch reads the handlers' types and signing keys, as a steady state's caches hold them ...
        Lambda.sqs(function, batch(warm), TestContext.of("items", 60_000));
        List<ItemJob> jobs = new ArrayList<>();
        for (PipelineFixture.Integration tenant : tenants) {
            jobs.addAll(oneItemRuns(tenant, 1));
            // ... and each tenant integration saved again, which forgets it: what is counted is the tenants' lookup.
            assertEquals(200, fixture.api("PUT", "/tenants/" + tenant.tenantId() + "/integrations/" + tenant.integrationKey(),
                    Json.object().put("enabled", true)).status());
        }
        CostMeter.Costs before = fixture.costs.snapshot();

        var response = Lambda.sqs(function, batch(jobs), TestContext.of("items", 60_000));

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        assertTrue(response.getBatchItemFailures().isEmpty());
        assertEquals(3, used.sqlStatements(), "the tenants' lookup, the claim, the record with the runs' completion");
    }

    /** {@code n} runs of one item each, as webhooks leave them (delivery, run, item), the items' messages not sent. */
    private static List<ItemJob> oneItemRuns(PipelineFixture.Integration integration, int n) {
        List<DeliveryStore.Offered> deliveries = new ArrayList<>();
        List<DeliveryStore.NewRun> runs = new ArrayList<>();
        List<DeliveryStore.NewItem> items = new ArrayList<>();
        List<ItemJob> jobs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            UUID runId = UUID.randomUUID();
            UUID itemId = UUID.randomUUID();
            deliveries.add(new DeliveryStore.Offered(integration.tenantId(), integration.integrationKey(), "msg_" + UUID.randomUUID(),
                    Duration.ofDays(1), runId));
            runs.add(new DeliveryStore.NewRun(runId, integration.handlerKey(), Direction.INBOUND, Trigger.WEBHOOK));
            items.add(new DeliveryStore.NewItem(itemId, i, "event-" + i, "{}"));
            jobs.add(new ItemJob(runId, itemId, integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                    Direction.INBOUND, Trigger.WEBHOOK, "event-" + i, 0, 0));
        }
        new DeliveryStore(fixture.runner.database()).accept(deliveries, runs, items, UUID.randomUUID(), List.of());
        return jobs;
    }

    /** The events/ sample's record, once per job: a batch as the event source mapping hands it over. */
    static SQSEvent batch(List<ItemJob> jobs) {
        SQSEvent event = Events.load("sqs-item-job.json", SQSEvent.class);
        SQSEvent.SQSMessage template = event.getRecords().getFirst();
        List<SQSEvent.SQSMessage> records = new ArrayList<>();
        for (ItemJob job : jobs) {
            var record = new SQSEvent.SQSMessage();
            record.setMessageId(job.itemId().toString());
            record.setReceiptHandle("rh-" + job.itemId());
            record.setBody(Json.write(job.toJson()));
            record.setAttributes(template.getAttributes());
            record.setEventSourceArn(template.getEventSourceArn());
            records.add(record);
        }
        event.setRecords(records);
        return event;
    }
}
