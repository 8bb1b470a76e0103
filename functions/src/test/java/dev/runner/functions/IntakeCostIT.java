package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.cost.CostMeter;
import dev.runner.store.Database;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What accepting an event costs, counted on the real clients once the caches are warm: a webhook is one Postgres
 * statement (its delivery, run, items and owed send together), one SQS request and one Redis round trip (the tenant
 * slot); an ingest batch shares them among its messages, whatever tenants they are for. Nothing consumes the tiers here.
 */
class IntakeCostIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @BeforeAll
    static void noConsumers() {
        fixture.pump.close();
    }

    @Test
    void aWebhookIsAcceptedWithOneStatementOneSqsRequestAndOneRedisRoundTrip() {
        var integration = fixture.integration(true);
        assertEquals(202, fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"warm\"}")).getStatusCode());
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"measured\"}");
        CostMeter.Costs before = fixture.costs.snapshot();

        assertEquals(202, fixture.webhook(event).getStatusCode());

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        System.out.printf("webhook accept: %d Postgres statements, %d SQS requests, %d Redis round trips%n",
                used.sqlStatements(), used.sqsRequests(), used.redisRoundTrips());
        assertEquals(1, used.sqlStatements(), "the accept's one statement");
        assertEquals(1, used.sqsRequests(), "the item's send");
        assertTrue(used.redisRoundTrips() <= 1, "the tenant slot's reservation: " + used.redisRoundTrips());
    }

    @Test
    void aRepeatedWebhookCostsOneStatementAndNoSend() {
        var integration = fixture.integration(true);
        var event = fixture.webhookEvent(integration, "{\"externalId\":\"twice\"}");
        assertEquals(202, fixture.webhook(event).getStatusCode());
        CostMeter.Costs before = fixture.costs.snapshot();

        assertEquals(202, fixture.webhook(event).getStatusCode());

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        assertEquals(1, used.sqlStatements(), "the accept answers a repeat with its run: no lookup of its own");
        assertEquals(0, used.sqsRequests());
    }

    @Test
    void anIngestBatchOfTenTenantsIsAcceptedWithOneStatementAndOneSqsRequest() {
        List<PipelineFixture.Integration> tenants = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tenants.add(fixture.integration(true));
        }
        ingest(tenants, "warm"); // the tenant integrations read once (cached), the types and scripts loaded
        CostMeter.Costs before = fixture.costs.snapshot();

        ingest(tenants, "measured");

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        System.out.printf("ingest batch of 10 messages for 10 tenants: %d Postgres statements, %d SQS requests, %d Redis round trips%n",
                used.sqlStatements(), used.sqsRequests(), used.redisRoundTrips());
        assertEquals(1, used.sqlStatements());
        assertEquals(1, used.sqsRequests());
        assertEquals(20L, fixture.runner.database().query("select count(*) from runs where tenant_id = any(?)", row -> row.getLong(1),
                Database.array("text", tenants.stream().map(PipelineFixture.Integration::tenantId).toArray())).getFirst(),
                "a run per tenant in each of the two batches");
    }

    /** The same batch for tenants not read yet: their tenant integrations are read with one statement, then the accept's. */
    @Test
    void anIngestBatchOfTenNewTenantsReadsThemWithOneStatement() {
        List<PipelineFixture.Integration> tenants = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tenants.add(fixture.integration(true));
            fixture.runner.integrations().handlerOrRefresh(tenants.getLast().integrationKey(), tenants.getLast().handlerKey());
        }
        CostMeter.Costs before = fixture.costs.snapshot();

        ingest(tenants, "cold");

        CostMeter.Costs used = fixture.costs.snapshot().minus(before);
        assertEquals(2, used.sqlStatements(), "one lookup for the batch's tenants, one accept");
        assertEquals(1, used.sqsRequests());
    }

    private static void ingest(List<PipelineFixture.Integration> tenants, String tag) {
        List<SQSEvent.SQSMessage> records = new ArrayList<>();
        tenants.forEach(tenant -> records.add(IngestIT.signed(tenant, tag + "-" + UUID.randomUUID())));
        var response = Lambda.sqs(new IngestFunction(fixture.runner), Lambda.sqsEvent(records), TestContext.of("ingest", 30_000));
        assertTrue(response.getBatchItemFailures().isEmpty());
    }
}
