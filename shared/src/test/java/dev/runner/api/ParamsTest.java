package dev.runner.api;

import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.run.RunQueries;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Request values and cursors, as pure functions. */
class ParamsTest {

    private static final UUID ID = UUID.fromString("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");

    @Test
    void onlyTheCanonicalUuidFormIsAnId() {
        assertEquals(ID, Params.uuid("runId", ID.toString()));
        assertEquals(ID, Params.uuid("runId", ID.toString().toUpperCase()));
        assertThrows(BadRequest.class, () -> Params.uuid("runId", "1-1-1-1-1"));
        assertThrows(BadRequest.class, () -> Params.uuid("runId", ID + "0"));
        assertEquals("runId is missing", assertThrows(BadRequest.class, () -> Params.uuid("runId", null)).getMessage());
    }

    @Test
    void aNumberOutsideItsRangeNamesTheRange() {
        assertEquals(50, Params.intInRange("limit", null, 50, 1, 500));
        assertEquals(500, Params.intInRange("limit", "500", 50, 1, 500));
        assertEquals("limit must be 1..500: 501", assertThrows(BadRequest.class, () -> Params.intInRange("limit", "501", 50, 1, 500)).getMessage());
        assertEquals("limit must be a whole number: 1e3", assertThrows(BadRequest.class, () -> Params.intInRange("limit", "1e3", 50, 1, 500)).getMessage());
    }

    @Test
    void aRunCursorComesBackAsThePositionItWasMadeFrom() {
        Instant createdAt = Instant.parse("2026-11-30T12:00:00.123456Z");
        String cursor = Params.cursor(createdAt.toString(), ID.toString());
        assertTrue(cursor.matches("[A-Za-z0-9_-]+"), "URL-safe without padding: " + cursor);
        assertEquals(new RunQueries.Position(createdAt, ID), RunRoutes.runPosition(cursor));
        assertNull(RunRoutes.runPosition(null));
        assertThrows(BadRequest.class, () -> RunRoutes.runPosition(Params.cursor("yesterday", ID.toString())));
        assertThrows(BadRequest.class, () -> RunRoutes.runPosition(Params.cursor(createdAt.toString(), "x", "y")));
        assertThrows(BadRequest.class, () -> RunRoutes.runPosition("%%%"));
    }

    @Test
    void anItemCursorOnlyWorksForTheStatusItWasMadeFor() {
        Instant dlqAt = Instant.parse("2026-11-30T12:00:00Z");
        String dead = Params.cursor("dead", dlqAt.toString(), ID.toString());
        assertEquals(new ItemQueries.Position(dlqAt, ID), ItemRoutes.itemPosition(dead, ItemStatus.DEAD));
        String succeeded = Params.cursor("succeeded", "", ID.toString());
        assertEquals(new ItemQueries.Position(null, ID), ItemRoutes.itemPosition(succeeded, ItemStatus.SUCCEEDED));

        BadRequest replayed = assertThrows(BadRequest.class, () -> ItemRoutes.itemPosition(dead, ItemStatus.SUCCEEDED));
        assertEquals("after belongs to the list of dead items, not succeeded", replayed.getMessage());
        assertThrows(BadRequest.class, () -> ItemRoutes.itemPosition(Params.cursor("dead", "", ID.toString()), ItemStatus.DEAD));
    }
}
