package dev.runner.pipeline;

import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.pipeline.CallResult.Observation;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How the calling step cuts a group into calls, reads a call's outcomes, and shows an item to its handler: no HTTP. */
class CallStepTest {

    private static final HandlerRef LEADS = new HandlerRef("crm", "leads");

    @Test
    void aGroupIsCutIntoCallsOfTheBatchSizeInOrder() {
        List<Item> members = IntStream.range(0, 7).mapToObj(i -> TestItems.item("t-1", Trigger.MANUAL)).toList();

        List<List<Item>> chunks = CallStep.chunks(members, 3);

        assertEquals(List.of(members.subList(0, 3), members.subList(3, 6), members.subList(6, 7)), chunks);
        assertEquals(7, CallStep.chunks(members, 1).size(), "one call per item for a handler without batches");
    }

    @Test
    void aCallIsDownOnlyWhenEveryItemFailedRetryablyAndSaysNothingWhenItOnlyAskedToWait() {
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        Outcome retryable = new Outcome.Failed("503", true);

        assertEquals(Observation.DOWN, CallResult.of(LEADS, Map.of(a, retryable, b, retryable)).observation());
        assertEquals(Observation.UP, CallResult.of(LEADS, Map.of(a, retryable, b, new Outcome.Succeeded())).observation(),
                "one answer shows the endpoint up");
        assertEquals(Observation.UP, CallResult.of(LEADS, Map.of(a, new Outcome.Failed("bad input", false))).observation(),
                "a business rejection is an answer");
        assertEquals(Observation.NONE, CallResult.of(LEADS, Map.of(a, new Outcome.Deferred(Duration.ofSeconds(3), "429"))).observation());
        assertEquals(Observation.NONE, CallResult.of(LEADS, Map.of()).observation());
    }

    @Test
    void aFailedCallFailsEachOfItsItemsRetryably() {
        Item one = TestItems.item("t-1", Trigger.MANUAL);
        Item two = TestItems.item("t-1", Trigger.MANUAL);

        CallResult failed = CallResult.failed(LEADS, List.of(one, two), "no answer before the invocation's deadline");

        assertEquals(Observation.DOWN, failed.observation());
        assertEquals(Map.of(one.itemId(), new Outcome.Failed("no answer before the invocation's deadline", true),
                two.itemId(), new Outcome.Failed("no answer before the invocation's deadline", true)), failed.outcomes());
    }

    @Test
    void theHandlerSeesTheItemWithItsClaimsPayloadAndAttempt() {
        Item item = TestItems.item("t-1", Trigger.WEBHOOK);
        var payload = Json.object().put("email", "a@example.com");

        var body = CallStep.itemBody(item.job(), new ItemStore.Claimed(2, payload));

        assertEquals(item.itemId().toString(), body.path("itemId").asText());
        assertEquals(item.job().runId().toString(), body.path("runId").asText());
        assertEquals("t-1", body.path("tenantId").asText());
        assertEquals("crm", body.path("integrationKey").asText());
        assertEquals("leads", body.path("handlerKey").asText());
        assertEquals("inbound", body.path("direction").asText());
        assertEquals("e-1", body.path("externalId").asText());
        assertEquals(payload, body.path("payload"));
        assertEquals(2, body.path("attempt").asInt());
    }
}
