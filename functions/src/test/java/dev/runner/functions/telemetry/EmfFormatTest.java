package dev.runner.functions.telemetry;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.metrics.Metrics;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An invocation's metrics as records, and the records as EMF lines (docs/metrics.md). No I/O. */
class EmfFormatTest {

    private static final long NOW = 1_767_000_000_000L;

    @Test
    void anInvocationAddsUpIntoOneRecordPerDimensionSet() {
        var recording = new MetricsRecording();
        recording.itemsSettled(new Metrics.ItemBatch(3, 1, 0, Map.of("tenant_limit", 2), Set.of("t-1", "t-2")));
        recording.itemsSettled(new Metrics.ItemBatch(2, 0, 1, Map.of("tenant_limit", 1, "breaker_open", 4), Set.of("t-3")));
        recording.handlerCall("crm", "leads", Duration.ofMillis(12), false);
        recording.handlerCall("crm", "leads", Duration.ofMillis(30), true);
        recording.breakerOpened("crm");
        recording.breakerOpen("erp");
        UUID runId = UUID.randomUUID();
        recording.runCompleted(runId, "t-1", Duration.ofSeconds(5));

        List<JsonNode> lines = lines(recording.records("runner-ItemWorkerFunction-1A2b", "req-1", true));

        assertEquals(5, lines.size(), "Function; Reason x2; IntegrationKey x2");
        JsonNode function = lines.getFirst();
        assertEquals(5, function.path("ItemsSucceeded").asInt());
        assertEquals(1, function.path("ItemsRetried").asInt());
        assertEquals(1, function.path("ItemsParked").asInt());
        assertEquals(5000, function.path("RunDuration").asInt());
        assertEquals(1, function.path("ColdStart").asInt());
        assertEquals("runner-ItemWorkerFunction-1A2b", function.path("Function").asText());
        assertEquals(List.of("t-1", "t-2", "t-3"), strings(function.path("tenantIds")));
        assertEquals(List.of(runId.toString()), strings(function.path("runIds")));
        assertEquals("req-1", function.path("function_request_id").asText());
        JsonNode directive = function.path("_aws").path("CloudWatchMetrics").path(0);
        assertEquals("Runner", directive.path("Namespace").asText());
        assertEquals("[[\"Function\"]]", directive.path("Dimensions").toString());
        assertEquals(NOW, function.path("_aws").path("Timestamp").asLong());

        JsonNode breakerOpen = lines.get(1);
        assertEquals("breaker_open", breakerOpen.path("Reason").asText());
        assertEquals(4, breakerOpen.path("ItemsDeferred").asInt());
        assertEquals(3, lines.get(2).path("ItemsDeferred").asInt(), "tenant_limit of both batches");

        JsonNode crm = lines.get(3);
        assertEquals("crm", crm.path("IntegrationKey").asText());
        assertEquals("[12,30]", crm.path("HandlerLatency").toString());
        assertEquals(1, crm.path("HandlerErrors").asInt());
        assertEquals(1, crm.path("BreakerOpened").asInt());
        assertEquals(List.of("leads"), strings(crm.path("handlerKeys")));
        assertEquals("[[\"Function\",\"IntegrationKey\"]]", crm.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        JsonNode erp = lines.get(4);
        assertEquals(1, erp.path("BreakerOpen").asInt());
        assertEquals("[[\"Function\"],[\"Function\",\"IntegrationKey\"]]", erp.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        assertFalse(erp.has("HandlerErrors"), "no call, no error count");
    }

    @Test
    void nothingHappenedNothingIsPublished() {
        assertTrue(new MetricsRecording().records("runner-ApiFunction", "req-2", false).isEmpty());
        assertEquals(1, new MetricsRecording().records("runner-ApiFunction", "req-3", true).size(), "a cold start is something");
    }

    @Test
    void aMetricOverAHundredValuesGoesOnInFurtherLines() {
        var recording = new MetricsRecording();
        IntStream.range(0, 230).forEach(i -> recording.handlerCall("crm", "leads", Duration.ofMillis(i), false));

        List<JsonNode> lines = lines(recording.records("runner-RunWorkerFunction", "req-4", false));

        assertEquals(List.of(100, 100, 30), lines.stream().map(line -> line.path("HandlerLatency").size()).toList());
        assertEquals(0, lines.getFirst().path("HandlerErrors").asInt());
        assertFalse(lines.get(1).has("HandlerErrors"), "a count is published once");
        assertTrue(lines.stream().allMatch(line -> line.path("IntegrationKey").asText().equals("crm")));
    }

    private static List<JsonNode> lines(List<MetricRecord> records) {
        List<JsonNode> lines = new ArrayList<>();
        records.forEach(record -> EmfFormat.lines(record, MetricsRecording.NAMESPACE, NOW).forEach(line -> lines.add(Json.parse(line))));
        return lines;
    }

    private static List<String> strings(JsonNode array) {
        List<String> strings = new ArrayList<>();
        array.forEach(element -> strings.add(element.asText()));
        return strings;
    }
}
