package dev.runner.item;

import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ItemJobTest {

    @Test
    void roundTripsThroughJson() {
        ItemJob job = new ItemJob(UUID.randomUUID(), UUID.randomUUID(), "t", "crm", "leads", Direction.OUTBOUND, Trigger.SCHEDULE, "e-1", 2, 4);
        assertEquals(job, ItemJob.fromJson(Json.parse(Json.write(job.toJson()))));
    }

    @Test
    void deferralCountsButKeepsTheAttempt() {
        ItemJob job = new ItemJob(UUID.randomUUID(), UUID.randomUUID(), "t", "crm", "leads", Direction.INBOUND, Trigger.WEBHOOK, "e-1", 1, 0);
        assertEquals(1, job.deferred().attempt());
        assertEquals(1, job.deferred().deferrals());
    }

    @Test
    void aMissingOrMistypedFieldIsNamed() {
        var error = assertThrows(Json.InvalidJsonException.class, () -> ItemJob.fromJson(Json.parse("{\"runId\":\"" + UUID.randomUUID() + "\"}")));
        assertEquals("itemId is missing", error.getMessage());
        var badTrigger = assertThrows(Json.InvalidJsonException.class, () -> ItemJob.fromJson(Json.parse(
                "{\"runId\":\"" + UUID.randomUUID() + "\",\"itemId\":\"" + UUID.randomUUID() + "\",\"tenantId\":\"t\",\"integrationKey\":\"i\","
                        + "\"handlerKey\":\"h\",\"direction\":\"inbound\",\"trigger\":\"cron\",\"externalId\":\"e\"}")));
        assertEquals("item job: unknown trigger: cron (webhook, manual, queue, schedule)", badTrigger.getMessage());
    }
}
