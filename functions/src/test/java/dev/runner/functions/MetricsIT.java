package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.functions.telemetry.EmfLines;
import dev.runner.functions.telemetry.InvocationMetrics;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The EMF the functions publish (docs/metrics.md), read back as CloudWatch would read it: the
 * functions driven by real events through real Postgres, Redis and SQS, their EMF lines captured
 * at the publisher and parsed. Function names are the test contexts' ("items", "webhook", "dlq").
 * A record adds up a whole invocation, whatever tenants its batch held, so the test whose items
 * wait for their tenant's window runs last: arriving later, they would share the next test's batches.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MetricsIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_MAX_ATTEMPTS", "2", "RUNNER_BREAKER_FAILURE_THRESHOLD", "2",
            "RUNNER_BREAKER_OPEN_MS", "1500", "RUNNER_BREAKER_HALF_OPEN_SUCCESSES", "1", "RUNNER_TENANT_LIMIT_PER_MINUTE", "6"));

    private static final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void captureEmf() {
        InvocationMetrics.publishTo(EmfLines.into(lines::add));
    }

    @AfterAll
    static void restoreEmf() {
        InvocationMetrics.publishTo(InvocationMetrics.EMF_ON_STDOUT);
    }

    @Test
    @Order(1)
    void anItemBatchPublishesOneRecordPerDimensionSetWithTheTenantAsAProperty() {
        var integration = fixture.integration(true);
        UUID runId = webhookRun(integration, "[{\"externalId\":\"m-1\"},{\"externalId\":\"m-2\"},{\"externalId\":\"m-3\"}]");
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));

        await().atMost(Duration.ofSeconds(10)).until(() -> sum("items", "ItemsSucceeded", of(integration)) == 3);
        List<JsonNode> outcomes = records("items", "ItemsSucceeded", of(integration));
        for (JsonNode record : outcomes) {
            assertEquals("Runner", directive(record, "ItemsSucceeded").path("Namespace").asText());
            assertEquals(List.of(List.of("Function")), dimensionSets(record, "ItemsSucceeded"), "Function only: " + record);
            assertEquals("Count", unit(record, "ItemsSucceeded"));
            assertEquals(List.of(integration.tenantId()), strings(record.path("tenantIds")), "the tenant is a property");
            assertTrue(record.path("function_request_id").isTextual(), "ties the record to the invocation's log lines");
        }
        assertTrue(lines().stream().allMatch(record -> dimensionNames(record).stream().noneMatch(name -> name.toLowerCase().contains("tenant"))),
                "no tenant dimension anywhere");

        await().atMost(Duration.ofSeconds(10)).until(() -> !records("items", "RunDuration", r -> strings(r.path("runIds")).contains(runId.toString())).isEmpty());
        JsonNode completion = records("items", "RunDuration", r -> strings(r.path("runIds")).contains(runId.toString())).getFirst();
        assertEquals("Milliseconds", unit(completion, "RunDuration"));
        assertTrue(values(completion, "RunDuration").stream().allMatch(ms -> ms >= 0), completion.toString());

        List<JsonNode> calls = records("items", "HandlerLatency", r -> r.path("IntegrationKey").asText().equals(integration.integrationKey()));
        assertEquals(List.of(List.of("Function", "IntegrationKey")), dimensionSets(calls.getFirst(), "HandlerLatency"));
        assertEquals(fixture.handlers.itemCalls(integration.handlerKey()).size(),
                calls.stream().mapToInt(r -> values(r, "HandlerLatency").size()).sum(), "one latency value per handler call");
        assertEquals(0, calls.stream().mapToDouble(r -> values(r, "HandlerErrors").getFirst()).sum());
        assertEquals(List.of(integration.handlerKey()), strings(calls.getFirst().path("handlerKeys")));

        Set<String> perInvocation = new HashSet<>();
        for (JsonNode record : lines()) {
            String key = record.path("function_request_id").asText() + "|" + record.path("Function").asText() + "|"
                    + record.path("Reason").asText() + "|" + record.path("IntegrationKey").asText() + "|"
                    + record.path("_aws").path("CloudWatchMetrics").path(0).path("Dimensions");
            assertTrue(perInvocation.add(key), "one record per invocation and dimension set: " + key);
        }
    }

    @Test
    @Order(2)
    void failingCallsCountAsErrorsOpenTheBreakerDeferAndEndDead() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 503);
        UUID runId = webhookRun(integration, "[{\"externalId\":\"f-1\"},{\"externalId\":\"f-2\"},{\"externalId\":\"f-3\"}]");
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(40));

        Predicate<JsonNode> ofIntegration = r -> r.path("IntegrationKey").asText().equals(integration.integrationKey());
        await().atMost(Duration.ofSeconds(10)).until(() -> sum("dlq", "ItemsDead", of(integration)) == 3);
        assertEquals(List.of(List.of("Function")), dimensionSets(records("dlq", "ItemsDead", of(integration)).getFirst(), "ItemsDead"));
        assertTrue(sum("items", "ItemsRetried", of(integration)) >= 1, "a first failure with attempts left waits for its backoff");
        assertEquals(sum("items", "HandlerLatency", ofIntegration, true), sum("items", "HandlerErrors", ofIntegration),
                "every call failed");
        assertTrue(sum("items", "BreakerOpened", ofIntegration) >= 1, "two failures open the breaker");
        List<JsonNode> open = records("items", "BreakerOpen", ofIntegration);
        assertFalse(open.isEmpty(), "admission found the breaker open");
        assertEquals(List.of(List.of("Function"), List.of("Function", "IntegrationKey")), dimensionSets(open.getFirst(), "BreakerOpen"),
                "per function for the alarm, per integration for the dashboard");
        List<JsonNode> deferred = records("items", "ItemsDeferred", r -> r.path("Reason").asText().startsWith("breaker_"));
        assertFalse(deferred.isEmpty(), "items wait for the breaker without using an attempt");
        assertEquals(List.of(List.of("Function", "Reason")), dimensionSets(deferred.getFirst(), "ItemsDeferred"));
    }

    @Test
    @Order(3)
    void itemsOverTheTenantWindowAreCountedWhereTheirSlotsAreReserved() {
        var integration = fixture.integration(true);
        String items = IntStream.range(0, 8).mapToObj(i -> "{\"externalId\":\"w-" + i + "\"}").collect(Collectors.joining(",", "[", "]"));
        webhookRun(integration, items);

        await().atMost(Duration.ofSeconds(5)).until(() -> sum("webhook", "TenantWindowDeferrals", of(integration)) == 2);
        JsonNode record = records("webhook", "TenantWindowDeferrals", of(integration)).getFirst();
        assertEquals(List.of(List.of("Function")), dimensionSets(record, "TenantWindowDeferrals"));
        assertEquals(1.0, values(record, "ColdStart").getFirst(), "a new function instance's first invocation is a cold start");
    }

    private static UUID webhookRun(PipelineFixture.Integration integration, String body) {
        var response = fixture.webhook(fixture.webhookEvent(integration, body));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }

    private static Predicate<JsonNode> of(PipelineFixture.Integration integration) {
        return record -> strings(record.path("tenantIds")).contains(integration.tenantId());
    }

    private static List<JsonNode> lines() {
        return lines.stream().map(Json::parse).toList();
    }

    /** Records of {@code function} that carry {@code metric} and pass {@code filter}. */
    private static List<JsonNode> records(String function, String metric, Predicate<JsonNode> filter) {
        return lines().stream().filter(r -> r.path("Function").asText().equals(function) && r.has(metric)).filter(filter).toList();
    }

    private static double sum(String function, String metric, Predicate<JsonNode> filter) {
        return sum(function, metric, filter, false);
    }

    /** The sum of the metric's values, or with {@code countValues} how many values there are. */
    private static double sum(String function, String metric, Predicate<JsonNode> filter, boolean countValues) {
        return records(function, metric, filter).stream()
                .mapToDouble(r -> countValues ? values(r, metric).size() : values(r, metric).stream().mapToDouble(Double::doubleValue).sum())
                .sum();
    }

    private static List<Double> values(JsonNode record, String metric) {
        JsonNode value = record.path(metric);
        return value.isArray() ? StreamSupport.stream(value.spliterator(), false).map(JsonNode::asDouble).toList() : List.of(value.asDouble());
    }

    /** The EMF directive that declares {@code metric}. */
    private static JsonNode directive(JsonNode record, String metric) {
        for (JsonNode directive : record.path("_aws").path("CloudWatchMetrics")) {
            for (JsonNode definition : directive.path("Metrics")) {
                if (definition.path("Name").asText().equals(metric)) {
                    return directive;
                }
            }
        }
        throw new AssertionError(metric + " is not declared in " + record);
    }

    private static String unit(JsonNode record, String metric) {
        for (JsonNode definition : directive(record, metric).path("Metrics")) {
            if (definition.path("Name").asText().equals(metric)) {
                return definition.path("Unit").asText();
            }
        }
        throw new AssertionError(metric);
    }

    private static List<List<String>> dimensionSets(JsonNode record, String metric) {
        List<List<String>> sets = new ArrayList<>();
        directive(record, metric).path("Dimensions").forEach(set -> sets.add(strings(set)));
        return sets;
    }

    private static Set<String> dimensionNames(JsonNode record) {
        Set<String> names = new HashSet<>();
        record.path("_aws").path("CloudWatchMetrics").forEach(d -> d.path("Dimensions").forEach(set -> names.addAll(strings(set))));
        return names;
    }

    private static List<String> strings(JsonNode array) {
        List<String> strings = new ArrayList<>();
        array.forEach(element -> strings.add(element.asText()));
        return strings;
    }
}
