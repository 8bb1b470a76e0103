package dev.runner.integration;

import dev.runner.json.Json;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordConfigsTest {

    @Test
    void orderingAndCoalescingAreOffUnlessAsked() {
        HandlerSpec spec = parse("{}");
        assertFalse(spec.configs().orderedByRecord());
        assertEquals(0, spec.configs().coalesceMs());
        assertFalse(spec.configs().keepsRecords());
        assertFalse(spec.toJson().path("configs").has("coalesce_ms"), "a type saved before keeps its shape");
    }

    @Test
    void bothReadBackAsSaved() {
        HandlerSpec spec = parse("{\"ordered_by_record\":true,\"coalesce_ms\":2000}");
        assertTrue(spec.configs().orderedByRecord());
        assertEquals(2000, spec.configs().coalesceMs());
        assertTrue(spec.configs().keepsRecords());
        assertEquals(spec, HandlerSpec.fromJson("leads", spec.toJson()));
    }

    @Test
    void aWindowPastSqssLongestDelayOrANonBooleanIsRefusedNamingTheField() {
        var window = assertThrows(Json.InvalidJsonException.class, () -> parse("{\"coalesce_ms\":900001}"));
        assertTrue(window.getMessage().contains("coalesce_ms must be 0..900000"), window.getMessage());
        var flag = assertThrows(Json.InvalidJsonException.class, () -> parse("{\"ordered_by_record\":\"yes\"}"));
        assertTrue(flag.getMessage().contains("ordered_by_record must be true or false"), flag.getMessage());
    }

    private static HandlerSpec parse(String configs) {
        return HandlerSpec.fromJson("leads", Json.parse("{\"url\":\"https://handlers.example/leads\",\"configs\":" + configs + "}"));
    }
}
