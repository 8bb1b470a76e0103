package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.local.demo.DemoIntegration;
import dev.runner.testing.OpenApiAnswers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The local runtime with the project's template.yaml and Runner's own functions, driven over
 * HTTP only, as a user would: the whole suite on real embedded servers.
 */
class LocalRuntimeIT {

    private static final String SECRET = "it-webhook-secret-0123";
    private static LocalRuntime runtime;
    private static RunnerApi api;

    @BeforeAll
    static void start() {
        Map<String, String> environment = Map.of(
                "RUNNER_BACKOFF_BASE_MS", "200",
                "RUNNER_MAX_ATTEMPTS", "3",
                // The failing-items test must exhaust attempts, not wait out an open breaker.
                "RUNNER_BREAKER_FAILURE_THRESHOLD", "100000",
                "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000");
        runtime = startProject(environment);
        api = checkedApi(runtime);
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void registersTheDemoIntegration() {
        JsonNode type = RunnerApi.require(api.get("/types/" + DemoIntegration.INTEGRATION_KEY), 200).body();
        assertEquals(runtime.demo().url(DemoIntegration.INTEGRATION_KEY, DemoIntegration.HANDLER_KEY),
                type.path("handlers").path(DemoIntegration.HANDLER_KEY).path("url").asText());
        JsonNode tenant = RunnerApi.require(api.get("/tenants/" + DemoIntegration.TENANT_ID + "/integrations/"
                + DemoIntegration.INTEGRATION_KEY), 200).body();
        assertTrue(tenant.path("enabled").asBoolean());
        assertEquals("rate(5 minutes)", tenant.path("schedules").path(DemoIntegration.HANDLER_KEY).asText());
    }

    @Test
    void aSignedWebhookBecomesACompletedRun() {
        String body = "[{\"externalId\":\"c-" + UUID.randomUUID() + "\",\"name\":\"Ada\"},"
                + "{\"externalId\":\"c-" + UUID.randomUUID() + "\",\"name\":\"Grace\"}]";
        var answer = RunnerApi.require(api.webhook(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY,
                DemoIntegration.WEBHOOK_SECRET, body), 202);
        assertEquals(2, answer.body().path("accepted").asInt());
        String runId = answer.body().path("runId").asText();

        JsonNode run = awaitRun(runId, "completed", Duration.ofSeconds(30));
        assertEquals("webhook", run.path("trigger").asText());
        assertEquals(2, run.path("counts").path("succeeded").asInt());
    }

    /** The demo handler answers an item with pendingMs pending and calls its callbackUrl later (docs/handler-contract.md, callbacks). */
    @Test
    void aPendingDemoItemWaitsThenItsCallbackCompletesTheRun() {
        String body = "{\"externalId\":\"c-" + UUID.randomUUID() + "\",\"name\":\"Katherine\",\"pendingMs\":1500}";
        String runId = RunnerApi.require(api.webhook(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY,
                DemoIntegration.WEBHOOK_SECRET, body), 202).body().path("runId").asText();

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> api.run(runId).path("counts").path("pending").asInt() == 1);
        JsonNode waiting = RunnerApi.require(api.get("/runs/" + runId + "/items?status=pending"), 200).body().path("items");
        assertTrue(waiting.path(0).path("pendingSince").isTextual(), "a pending item says since when it waits: " + waiting);

        JsonNode run = awaitRun(runId, "completed", Duration.ofSeconds(30));
        assertEquals(1, run.path("counts").path("succeeded").asInt());
        assertEquals(0, run.path("counts").path("pending").asInt());
    }

    /**
     * The functions' metrics are the EMF documents Powertools writes in Lambda (docs/metrics.md), in the
     * file the READY line names: namespace Runner, the Function dimension, the properties.
     */
    @Test
    void writesEachInvocationsMetricsAsEmfToTheFileTheReadyLineNames() throws Exception {
        assertTrue(runtime.readyLine().endsWith(" metrics=" + runtime.metricsPath()), runtime.readyLine());
        String externalId = "emf-" + UUID.randomUUID();
        String runId = RunnerApi.require(api.webhook(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY,
                DemoIntegration.WEBHOOK_SECRET, "{\"externalId\":\"" + externalId + "\"}"), 202).body().path("runId").asText();
        awaitRun(runId, "completed", Duration.ofSeconds(30));

        await().atMost(Duration.ofSeconds(10)).until(() -> emf().stream().anyMatch(doc -> has(doc, "ItemsSucceeded")
                && doc.path("tenantIds").toString().contains(DemoIntegration.TENANT_ID)));
        List<JsonNode> documents = emf();
        for (JsonNode doc : documents) {
            JsonNode directive = doc.path("_aws").path("CloudWatchMetrics").get(0);
            assertEquals("Runner", directive.path("Namespace").asText(), doc.toString());
            assertTrue(doc.path("_aws").path("Timestamp").isNumber(), doc.toString());
            assertEquals("Function", directive.path("Dimensions").get(0).get(0).asText(), "every metric carries Function: " + doc);
            assertTrue(doc.path("Function").asText().startsWith("runner-"), doc.toString());
            directive.path("Metrics").forEach(metric -> assertTrue(doc.has(metric.path("Name").asText()), "a value for " + metric));
        }
        JsonNode succeeded = documents.stream().filter(doc -> has(doc, "ItemsSucceeded")
                && doc.path("tenantIds").toString().contains(DemoIntegration.TENANT_ID)).findFirst().orElseThrow();
        assertEquals("runner-ItemWorkerFunction", succeeded.path("Function").asText());
        assertEquals("[[\"Function\"]]", Json.write(succeeded.path("_aws").path("CloudWatchMetrics").get(0).path("Dimensions")));
        assertTrue(succeeded.has("function_request_id"), "the property that ties it to the invocation's log lines: " + succeeded);
        assertTrue(documents.stream().anyMatch(doc -> has(doc, "HandlerLatency") && doc.has("IntegrationKey")), "handler latency by integration");
    }

    private static List<JsonNode> emf() throws java.io.IOException {
        return Files.readAllLines(runtime.metricsPath()).stream().map(Json::parse).toList();
    }

    private static boolean has(JsonNode doc, String metric) {
        for (JsonNode m : doc.path("_aws").path("CloudWatchMetrics").get(0).path("Metrics")) {
            if (m.path("Name").asText().equals(metric)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aBadSignatureIsRejectedAsJson() {
        var answer = api.webhook(DemoIntegration.TENANT_ID, DemoIntegration.INTEGRATION_KEY, "not-the-secret-at-all", "{\"externalId\":\"x\"}");
        assertEquals(401, answer.status());
        assertTrue(answer.body().has("error"), answer.body().toString());
    }

    @Test
    void aManualRunFetchesEveryPageAndCompletes() {
        String integration = "it-pages";
        String tenant = "t-pages";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 100, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 4).put("pageSize", 25));

        JsonNode run = awaitRun(api.startRun(tenant, integration), "completed", Duration.ofSeconds(60));
        assertEquals("manual", run.path("trigger").asText());
        assertEquals(100, run.path("counts").path("total").asInt());
        assertEquals(100, run.path("counts").path("succeeded").asInt());
    }

    @Test
    void itemsThatKeepFailingEndDeadWithDlqAt() {
        String integration = "it-failing";
        String tenant = "t-failing";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 1).put("pageSize", 3).put("fail", true));

        String runId = api.startRun(tenant, integration);
        JsonNode run = awaitRun(runId, "completed_with_errors", Duration.ofSeconds(60));
        assertEquals(3, run.path("counts").path("dead").asInt());
        JsonNode dead = RunnerApi.require(api.get("/runs/" + runId + "/items?status=dead"), 200).body().path("items");
        assertEquals(3, dead.size());
        for (JsonNode item : dead) {
            assertFalse(item.path("dlqAt").isNull() || item.path("dlqAt").isMissingNode(), item.toString());
            assertEquals(3, item.path("attempts").asInt(), item.toString());
        }
    }

    /**
     * The tiers at work: a manual backlog fills the manual tier's pollers while webhook items go
     * through their own. (Priority between tiers inside one handler's concurrency slots is the
     * guard's business, tested in shared.)
     */
    @Test
    void webhooksCompleteWithinSecondsWhileAManualBacklogDrains() {
        String backlogIntegration = "it-backlog";
        String urgentIntegration = "it-urgent";
        // Enough handler concurrency for every manual poller: the tier, not the handler, is the bottleneck.
        api.putType(backlogIntegration, runtime.demo().url(backlogIntegration, DemoIntegration.HANDLER_KEY), 100, 600000);
        api.putType(urgentIntegration, runtime.demo().url(urgentIntegration, DemoIntegration.HANDLER_KEY), 10, 600000);
        // 3,000 items whose every handler call takes 400 ms: the manual tier is busy for many seconds.
        api.putTenant("t-backlog", backlogIntegration, SECRET,
                Json.object().put("pages", 6).put("pageSize", 500).put("delayMs", 400));
        api.putTenant("t-urgent", urgentIntegration, SECRET, Json.object());

        String backlog = api.startRun("t-backlog", backlogIntegration);
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> api.run(backlog).path("counts").path("succeeded").asInt() > 0);
            List<Duration> latencies = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Instant sent = Instant.now();
                String body = "{\"externalId\":\"urgent-" + UUID.randomUUID() + "\"}";
                String runId = RunnerApi.require(api.webhook("t-urgent", urgentIntegration, SECRET, body), 202)
                        .body().path("runId").asText();
                awaitRun(runId, "completed", Duration.ofSeconds(30));
                latencies.add(Duration.between(sent, Instant.now()));
            }

            JsonNode backlogRun = api.run(backlog);
            assertTrue(backlogRun.path("counts").path("succeeded").asInt() < 3000,
                    "the backlog must still be draining for this to show anything: " + backlogRun);
            // Behind the backlog's own tier it would wait minutes; 15 s leaves a loaded machine its cold start and polls.
            latencies.forEach(latency -> assertTrue(latency.compareTo(Duration.ofSeconds(15)) < 0,
                    "webhook run took " + latency + " behind a manual backlog; all: " + latencies));
        } finally {
            // The other tests must not share the manual tier with this backlog.
            awaitRun(backlog, "completed", Duration.ofMinutes(3));
        }
    }

    /**
     * Every route once, with real data, and a few of their refusals: each answer is checked against the
     * OpenAPI document by the API client (its status declared, its body valid against the schema).
     */
    @Test
    void everyRouteAnswersAsTheOpenApiDocumentSays() {
        String integration = "it-openapi";
        String tenant = "t-openapi";
        String handler = "/handlers/" + integration + "/" + DemoIntegration.HANDLER_KEY;
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 1).put("pageSize", 2).put("reject", true));
        String runId = api.startRun(tenant, integration);
        awaitRun(runId, "completed_with_errors", Duration.ofSeconds(60));

        RunnerApi.require(api.get("/openapi.json"), 200);
        RunnerApi.require(api.get("/health"), 200);
        RunnerApi.require(api.get("/session"), 200);
        RunnerApi.require(api.get("/types/" + integration), 200);
        RunnerApi.require(api.get("/tenants/" + tenant + "/integrations/" + integration), 200);
        RunnerApi.require(api.get("/tenants?limit=5"), 200);
        RunnerApi.require(api.get("/runs?tenantId=" + tenant), 200);
        RunnerApi.require(api.get("/runs/" + runId + "/items?status=dead"), 200);
        JsonNode dead = RunnerApi.require(api.get("/items?status=dead&tenantId=" + tenant), 200).body().path("items");
        String itemId = dead.get(0).path("itemId").asText();
        RunnerApi.require(api.get("/items/" + itemId), 200);
        RunnerApi.require(api.post("/items/" + itemId + "/redrive", Json.object()), 202);
        RunnerApi.require(api.post("/runs/" + runId + "/redrive", Json.object()), 202);
        RunnerApi.require(api.post("/redrive", Json.object().put("tenantId", tenant)), 202);
        awaitRun(runId, "completed_with_errors", Duration.ofSeconds(60));
        RunnerApi.require(api.post("/runs/" + runId + "/cancel", Json.object()), 409);

        RunnerApi.require(api.get("/handlers"), 200);
        RunnerApi.require(api.get("/breakers/" + integration), 200);
        RunnerApi.require(api.post(handler + "/pause", Json.object()), 200);
        RunnerApi.require(api.post(handler + "/resume", Json.object()), 200);
        String current = RunnerApi.require(api.post(handler + "/signing-keys", Json.object().put("overlapSeconds", 60)), 201)
                .body().path("keyId").asText();
        RunnerApi.require(api.post(handler + "/signing-keys", Json.object()), 409);
        for (JsonNode key : RunnerApi.require(api.get(handler + "/signing-keys"), 200).body().path("signingKeys")) {
            if (key.path("state").asText().equals("retiring")) {
                RunnerApi.require(api.delete(handler + "/signing-keys/" + key.path("keyId").asText()), 200);
            }
        }
        RunnerApi.require(api.delete(handler + "/signing-keys/" + current), 409);
        RunnerApi.require(api.get("/queues"), 200);
        RunnerApi.require(api.get("/metrics/items?minutes=5"), 200);

        RunnerApi.require(api.put("/ingest-producers/AIDAOPENAPI", Json.object().set("tenants", Json.array().add(tenant))), 200);
        RunnerApi.require(api.get("/ingest-producers/AIDAOPENAPI"), 200);
        RunnerApi.require(api.delete("/ingest-producers/AIDAOPENAPI"), 200);
        RunnerApi.require(api.get("/ingest-producers/AIDAOPENAPI"), 404);

        String keyId = RunnerApi.require(api.post("/keys", Json.object().put("tenantId", tenant).put("name", "openapi")), 201)
                .body().path("keyId").asText();
        RunnerApi.require(api.get("/keys?tenantId=" + tenant), 200);
        RunnerApi.require(api.delete("/keys/" + keyId), 200);

        RunnerApi.require(api.get("/runs/" + UUID.randomUUID()), 404);
        RunnerApi.require(api.get("/runs?limit=0"), 400);
        RunnerApi.require(api.get("/nowhere"), 404);
        RunnerApi.require(new RunnerApi(runtime.apiUrl(), "not-the-key", OpenApiAnswers.load()::check).get("/runs"), 401);
        RunnerApi.require(api.webhook(tenant, integration, SECRET, "{\"externalId\":\"openapi-1\"}"), 202);
        RunnerApi.require(api.webhook(tenant, integration, "a-wrong-secret-0123456", "{\"externalId\":\"openapi-2\"}"), 401);
    }

    private static JsonNode awaitRun(String runId, String status, Duration atMost) {
        await().atMost(atMost).pollInterval(Duration.ofMillis(100))
                .until(() -> status.equals(api.run(runId).path("status").asText()));
        return api.run(runId);
    }

    /** The project's template.yaml: failsafe runs in the module directory, the template is one up. */
    /** The runtime on the project's template, on free ports, with {@code environment} over its defaults. */
    static LocalRuntime startProject(Map<String, String> environment) {
        return LocalRuntime.start(LocalOptions.defaults(projectTemplate(), environment).withFreePorts());
    }

    /** The admin's client of {@code runtime}, checking every answer against the OpenAPI document. */
    static RunnerApi checkedApi(LocalRuntime runtime) {
        return new RunnerApi(runtime.apiUrl(), runtime.apiKey(), OpenApiAnswers.load()::check);
    }

    static Path projectTemplate() {
        for (Path candidate : new Path[] {Path.of("template.yaml"), Path.of("..", "template.yaml")}) {
            if (Files.isRegularFile(candidate)) {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new IllegalStateException("template.yaml not found from " + Path.of("").toAbsolutePath());
    }
}
