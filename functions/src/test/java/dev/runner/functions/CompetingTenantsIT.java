package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.ConcurrencyAndRate;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.item.ItemJob;
import dev.runner.json.Json;
import dev.runner.testing.FakeHandler;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * Tenants competing for a handler's leases inside one invocation: a mixed batch whose admission
 * grants a lease to one tenant only (the other is at its share) calls the first tenant's items,
 * then asks again for the other's once those calls are done, and calls them in the same
 * invocation: nothing goes back to SQS. Real Postgres, Redis and handler; one hand-made SQS batch.
 */
class CompetingTenantsIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "100000"));

    @Test
    void aTenantGrantedNoLeaseInAMixedBatchIsCalledInASecondRoundOfTheSameInvocation() {
        var integration = fixture.integration(false, Json.object().put("concurrency", 2));
        String a = integration.tenantId();
        String b = a + "-b";
        var response = fixture.api("PUT", "/tenants/" + b + "/integrations/" + integration.integrationKey(),
                Json.object().put("enabled", true).put("webhookSecret", integration.webhookSecret()));
        assertEquals(200, response.status(), response.body());
        Guard guard = fixture.runner.guard();
        var limits = new ConcurrencyAndRate(2, 0);

        // Tenant A holds one of the two leases elsewhere; B is left waiting for one (a filler holds the other), then it frees.
        GroupAdmission elsewhere = admit(guard, integration, limits, new Candidate("elsewhere-a", a, Trigger.MANUAL.priority()));
        GroupAdmission filler = admit(guard, integration, limits, new Candidate("filler", a + "-filler", Trigger.MANUAL.priority()));
        assertEquals(1, elsewhere.leaseTokens().size());
        assertEquals(1, filler.leaseTokens().size());
        assertInstanceOf(Admission.Deferred.class,
                admit(guard, integration, limits, new Candidate("waits-b", b, Trigger.MANUAL.priority())).decisions().getFirst());
        release(guard, integration, filler);

        // A's lease elsewhere comes back while B's calls run: A's items may then be called.
        AtomicInteger bCalls = new AtomicInteger();
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        fixture.handlers.handler(integration.handlerKey()).itemReply(item -> {
            String tenant = item.path("tenantId").asText();
            order.add(tenant);
            if (tenant.equals(b) && bCalls.incrementAndGet() == 4) {
                release(guard, integration, elsewhere);
            }
            return FakeHandler.Reply.OK;
        });
        List<ItemJob> batch = new ArrayList<>(fixture.storedItems(integration, a, 4));
        batch.addAll(fixture.storedItems(integration, b, 4));
        Lambda.sqs(new ItemWorkerFunction(fixture.runner), ItemWorkerCostIT.batch(batch), TestContext.of("items", 60_000));

        assertEquals(List.of(b, b, b, b, a, a, a, a), order, "B (under its share) first; A once its lease elsewhere came back");
        for (ItemJob job : batch) {
            JsonNode row = Json.parse(fixture.runner.database().query(
                    "select json_build_object('status', status, 'attempts', attempts)::text from execution_items where item_id = ?",
                    r -> r.getString(1), job.itemId()).getFirst());
            assertEquals("succeeded", row.path("status").asText(), "called in this invocation, not deferred: " + row);
            assertEquals(1, row.path("attempts").asInt());
        }
    }

    private static GroupAdmission admit(Guard guard, PipelineFixture.Integration integration, ConcurrencyAndRate limits, Candidate item) {
        return guard.admit(List.of(new GroupRequest(integration.integrationKey(), integration.handlerKey(), limits, List.of(item))))
                .getFirst();
    }

    private static void release(Guard guard, PipelineFixture.Integration integration, GroupAdmission admission) {
        guard.report(List.of(new GroupReport(integration.integrationKey(), integration.handlerKey(), List.of(), admission.leaseTokens(),
                List.of())));
    }
}
