package dev.runner.functions.telemetry;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.metrics.Metrics;
import org.junit.jupiter.api.Test;
import software.amazon.cloudwatchlogs.emf.config.EnvironmentConfigurationProvider;
import software.amazon.cloudwatchlogs.emf.environment.Environments;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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

/**
 * An invocation's metrics as records, and the records as the EMF lines Powertools writes for them
 * (docs/metrics.md), read from a sink instead of stdout. No I/O.
 */
class PowertoolsMetricsPublisherTest {

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

        long before = System.currentTimeMillis();
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
        assertTrue(function.path("_aws").path("Timestamp").asLong() >= before, "stamped when published");
        assertEquals(1, function.path("_aws").path("CloudWatchMetrics").size(), "one directive");

        JsonNode breakerOpen = lines.get(1);
        assertEquals("breaker_open", breakerOpen.path("Reason").asText());
        assertEquals(4, breakerOpen.path("ItemsDeferred").asInt());
        assertEquals(3, lines.get(2).path("ItemsDeferred").asInt(), "tenant_limit of both batches");

        JsonNode crm = lines.get(3);
        assertEquals("crm", crm.path("IntegrationKey").asText());
        assertEquals(List.of(12.0, 30.0), numbers(crm.path("HandlerLatency")));
        assertEquals(1, crm.path("HandlerErrors").asInt());
        assertEquals(1, crm.path("BreakerOpened").asInt());
        assertEquals(List.of("leads"), strings(crm.path("handlerKeys")));
        assertEquals("[[\"Function\",\"IntegrationKey\"]]", crm.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        JsonNode erp = lines.get(4);
        assertEquals(1, erp.path("BreakerOpen").asInt());
        assertEquals("[[\"Function\"],[\"Function\",\"IntegrationKey\"]]", erp.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        assertFalse(erp.has("HandlerErrors"), "no call, no error count");
    }

    /** The alarmed metrics: Redis failing open (per function) and a breaker's recovery (per integration). */
    @Test
    void failOpensAndBreakerRecoveriesAreCounted() {
        var recording = new MetricsRecording();
        recording.redisFailOpen("admission");
        recording.redisFailOpen("report");
        recording.breakerClosed("crm");

        List<JsonNode> lines = lines(recording.records("runner-ItemWorkerFunction-1A2b", "req-9", false));

        JsonNode function = lines.getFirst();
        assertEquals(2, function.path("RedisFailOpen").asInt(), function.toString());
        assertEquals("[[\"Function\"]]", function.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        JsonNode crm = lines.stream().filter(line -> line.path("IntegrationKey").asText().equals("crm")).findFirst().orElseThrow();
        assertEquals(1, crm.path("BreakerClosed").asInt(), crm.toString());
        assertFalse(crm.has("BreakerOpened"), "nothing opened");
    }

    /** A tenant's scope of a breaker: counted per integration, its tenants a property (unbounded, never a dimension). */
    @Test
    void tenantScopeTransitionsAreCountedPerIntegrationWithTheirTenantsAsAProperty() {
        var recording = new MetricsRecording();
        recording.tenantBreakerOpened("crm", "t-broken");
        recording.tenantBreakerOpened("crm", "t-other");
        recording.tenantBreakerClosed("crm", "t-broken");

        List<JsonNode> lines = lines(recording.records("runner-ItemWorkerFunction", "req-7", false));

        JsonNode crm = lines.stream().filter(line -> line.path("IntegrationKey").asText().equals("crm")).findFirst().orElseThrow();
        assertEquals(2, crm.path("TenantBreakerOpened").asInt(), crm.toString());
        assertEquals(1, crm.path("TenantBreakerClosed").asInt(), crm.toString());
        assertFalse(crm.has("BreakerOpened"), "the integration's own breaker did not move");
        assertEquals(List.of("t-broken", "t-other"), strings(crm.path("tenantIds")));
        assertEquals("[[\"Function\",\"IntegrationKey\"]]", crm.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
    }

    @Test
    void metricsUnderOtherDimensionSetsGoIntoALineOfTheirOwn() {
        var recording = new MetricsRecording();
        recording.handlerCall("crm", "leads", Duration.ofMillis(12), true);
        recording.breakerOpen("crm");

        List<JsonNode> lines = lines(recording.records("runner-ItemWorkerFunction", "req-5", false));

        assertEquals(2, lines.size(), "a Powertools instance has one list of dimension sets for all its metrics");
        JsonNode calls = lines.getFirst();
        assertEquals("[[\"Function\",\"IntegrationKey\"]]", calls.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        assertEquals(1, calls.path("HandlerErrors").asInt());
        assertFalse(calls.has("BreakerOpen"), "not summed per function with the calls");
        JsonNode open = lines.get(1);
        assertEquals("[[\"Function\"],[\"Function\",\"IntegrationKey\"]]", open.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions").toString());
        assertEquals(1, open.path("BreakerOpen").asInt());
        assertFalse(open.has("HandlerLatency"));
        assertEquals("crm", open.path("IntegrationKey").asText());
        assertEquals("req-5", open.path("function_request_id").asText());
    }

    @Test
    void withoutAwsEmfEnvironmentTheLinesStillGoToStdoutNeverToAnAgent() {
        assertTrue(InvocationMetrics.EMF_ON_STDOUT instanceof PowertoolsMetricsPublisher);
        assertEquals(Environments.Lambda, EnvironmentConfigurationProvider.getConfig().getEnvironmentOverride(),
                "Lambda's environment: stdout, no probe of the metadata endpoints");
    }

    @Test
    void primingAtInitWritesNoLine() {
        PrintStream stdout = System.out;
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        System.setOut(new PrintStream(written, true, StandardCharsets.UTF_8));
        try {
            InvocationMetrics.EMF_ON_STDOUT.prime();
        } finally {
            System.setOut(stdout);
        }
        assertEquals("", written.toString(StandardCharsets.UTF_8), "a primed record is not a metric");
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
        assertEquals(IntStream.range(0, 230).mapToObj(i -> (double) i).toList(),
                lines.stream().flatMap(line -> numbers(line.path("HandlerLatency")).stream()).toList(), "every value once, in order");
        assertEquals(1, lines.stream().filter(line -> line.has("HandlerErrors")).count(), "a count is published once");
        assertTrue(lines.stream().allMatch(line -> line.path("IntegrationKey").asText().equals("crm")));
    }

    private static List<JsonNode> lines(List<MetricRecord> records) {
        List<JsonNode> lines = new ArrayList<>();
        EmfLines.into(line -> lines.add(Json.parse(line))).publish(records);
        return lines;
    }

    private static List<Double> numbers(JsonNode array) {
        List<Double> numbers = new ArrayList<>();
        array.forEach(element -> numbers.add(element.asDouble()));
        return numbers;
    }

    private static List<String> strings(JsonNode array) {
        List<String> strings = new ArrayList<>();
        array.forEach(element -> strings.add(element.asText()));
        return strings;
    }
}
