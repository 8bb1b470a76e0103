package dev.runner.item;

import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ItemMessageTest {

    private static final UUID RUN = UUID.randomUUID();

    @Test
    void aPackRoundTripsEveryItemWithItsOwnCounters() {
        List<ItemJob> jobs = List.of(job("e-1", 0, 0, 0, 0), job("e-2", 2, 1, 0, 0), job("e-\u00e9\"3", 1, 4, 2, 1_700_000_000_123L));

        String body = ItemMessage.write(jobs);

        assertTrue(body.startsWith("{\"type\":\"items\""), body);
        assertEquals(jobs, ItemMessage.read(Json.parse(body)));
    }

    @Test
    void aPackOfOneIsWrittenInTheOneItemShapeEveryVersionReads() {
        ItemJob job = job("e-1", 1, 0, 0, 0);

        String body = ItemMessage.write(List.of(job));

        assertEquals(job, ItemJob.fromJson(Json.parse(body)), "what a worker of the previous version reads");
        assertEquals(List.of(job), ItemMessage.read(Json.parse(body)));
    }

    @Test
    void theOneItemShapeOfThePreviousVersionIsRead() {
        String previous = "{\"type\":\"item\",\"runId\":\"" + RUN + "\",\"itemId\":\"" + UUID.randomUUID() + "\",\"tenantId\":\"t\","
                + "\"integrationKey\":\"crm\",\"handlerKey\":\"leads\",\"direction\":\"inbound\",\"trigger\":\"manual\","
                + "\"externalId\":\"e\",\"attempt\":1,\"deferrals\":0}";

        List<ItemJob> jobs = ItemMessage.read(Json.parse(previous));

        assertEquals(1, jobs.size());
        assertEquals(1, jobs.getFirst().attempt());
    }

    @Test
    void aBrokenPackIsNamedNotHalfRead() {
        String noItems = ItemMessage.write(List.of(job("e-1", 0, 0, 0, 0), job("e-2", 0, 0, 0, 0))).replaceAll("\"items\":\\[.*]", "\"items\":[]");
        assertEquals("items must be a non-empty array",
                assertThrows(Json.InvalidJsonException.class, () -> ItemMessage.read(Json.parse(noItems))).getMessage());
        String badId = ItemMessage.write(List.of(job("e-1", 0, 0, 0, 0), job("e-2", 0, 0, 0, 0))).replaceFirst("\"itemId\":\"[^\"]+\"", "\"itemId\":\"x\"");
        assertTrue(assertThrows(Json.InvalidJsonException.class, () -> ItemMessage.read(Json.parse(badId))).getMessage().startsWith("item pack:"));
        assertEquals("type must be item or items: run",
                assertThrows(Json.InvalidJsonException.class, () -> ItemMessage.read(Json.parse("{\"type\":\"run\"}"))).getMessage());
    }

    @Test
    void utf8LengthIsWhatSqsCounts() {
        for (String text : List.of("abc", "\u00e9t\u00e9", "\u20ac", "\ud83d\ude00 x")) {
            assertEquals(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length, ItemMessage.utf8Length(text), text);
        }
    }

    private static ItemJob job(String externalId, int attempt, int deferrals, int handlerWaits, long tenantSlotAt) {
        return new ItemJob(RUN, UUID.randomUUID(), "t-1", "crm", "leads", Direction.INBOUND, Trigger.MANUAL, externalId, attempt, deferrals,
                handlerWaits, tenantSlotAt);
    }
}
