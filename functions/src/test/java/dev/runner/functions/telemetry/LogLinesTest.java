package dev.runner.functions.telemetry;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shape of a log line and the level settings. No I/O. */
class LogLinesTest {

    private static final Instant NOW = Instant.parse("2026-01-02T03:04:05.678Z");

    @Test
    void aLineIsOneJsonObjectWithItsInvocationTypedFieldsAndStackTrace() {
        var error = new IllegalStateException("boom", new java.io.IOException("disk"));
        String line = LogLines.json(NOW, "dev.runner.pipeline.ItemWorker", Level.ERROR, "handler call crashed",
                Map.of("function_name", "runner-ItemWorkerFunction-1A2b", "function_request_id", "req-1", "cold_start", "true"),
                List.of(new KeyValuePair("items", 3), new KeyValuePair("ratio", 0.5), new KeyValuePair("why", List.of("tenant_limit")),
                        new KeyValuePair("error", error), new KeyValuePair("message", "a field named like the line's"),
                        new KeyValuePair("none", null)),
                error);

        assertFalse(line.contains("\n"), "one line, whatever the stack");
        JsonNode json = Json.parse(line);
        assertEquals("2026-01-02T03:04:05.678Z", json.path("timestamp").asText());
        assertEquals("ERROR", json.path("level").asText());
        assertEquals("dev.runner.pipeline.ItemWorker", json.path("logger").asText());
        assertEquals("handler call crashed", json.path("message").asText());
        assertEquals("runner-ItemWorkerFunction-1A2b", json.path("function_name").asText());
        assertEquals("req-1", json.path("function_request_id").asText());
        assertTrue(json.path("cold_start").isBoolean() && json.path("cold_start").asBoolean());
        assertEquals(3, json.path("items").asInt());
        assertTrue(json.path("items").isIntegralNumber());
        assertEquals(0.5, json.path("ratio").asDouble());
        assertEquals("tenant_limit", json.path("why").path(0).asText());
        assertEquals("IllegalStateException: boom", json.path("error").asText());
        assertEquals("a field named like the line's", json.path("field.message").asText(), "a field never hides the message");
        assertTrue(json.path("none").isNull());
        String stack = json.path("stack_trace").asText();
        assertTrue(stack.startsWith("java.lang.IllegalStateException: boom"), stack);
        assertTrue(stack.contains("Caused by: java.io.IOException: disk"), stack);
    }

    @Test
    void aPlainLineIsForPeople() {
        String line = LogLines.plain(NOW, "dev.runner.local.LocalRuntime", Level.INFO, "wired queue runner-ingest",
                List.of(new KeyValuePair("batch", 10)), null);

        assertTrue(line.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\[[^]]+] INFO dev\\.runner\\.local\\.LocalRuntime - wired queue runner-ingest batch=10"),
                line);
    }

    @Test
    void theLongestPrefixDecidesALoggersLevel() {
        LogSettings settings = LogSettings.parse("warn, dev.runner=info, dev.runner.guard=debug, io.lettuce=off", List.of("dev.runner.local"));

        assertEquals(Level.WARN.toInt(), settings.threshold("com.zaxxer.hikari.HikariDataSource"));
        assertEquals(Level.INFO.toInt(), settings.threshold("dev.runner.pipeline.ItemWorker"));
        assertEquals(Level.DEBUG.toInt(), settings.threshold("dev.runner.guard.Guard"));
        assertEquals(LogSettings.OFF, settings.threshold("io.lettuce.core.RedisClient"));
        assertTrue(settings.plain("dev.runner.local.LocalRuntime"));
        assertFalse(settings.plain("dev.runner.pipeline.ItemWorker"));
        assertEquals(Level.INFO.toInt(), LogSettings.parse(" ", List.of()).threshold("any"), "unset: info");
        assertEquals(Level.DEBUG.toInt(), LogSettings.parse("DEBUG", List.of()).threshold("any"));
    }

    @Test
    void aMisspeltLevelIsRefusedWithTheLevelsThereAre() {
        var e = assertThrows(IllegalArgumentException.class, () -> LogSettings.parse("verbose", List.of()));
        assertEquals("unknown log level 'verbose' in RUNNER_LOG_LEVEL=verbose (levels: error, warn, info, debug, trace, off)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LogSettings.parse("info,dev.runner", List.of()));
    }
}
