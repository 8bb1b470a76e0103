package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.cost.CostMeter;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The management API through its handler against real Postgres, Redis and SQS, with the pipeline
 * running: tenant keys and their scope, the console's lists and actions, and what they cost.
 */
class ManagementApiIT {

    @RegisterExtension
    /** The IAM sample's user is listed as admin (ManagementIamPrincipals). */
    static final PipelineFixture fixture = new PipelineFixture(Map.of(
            "RUNNER_MANAGEMENT_IAM_PRINCIPALS", "arn:aws:iam::123456789012:user/runner-operator=admin"));

    /** A second root on the same servers whose meter counts the API's own statements and round trips, not the pump's. */
    private static final CostMeter apiCosts = new CostMeter();
    private static final Runner apiRunner = new Runner(fixture.stack.config(), Clock.systemUTC(), apiCosts);

    @AfterAll
    static void closeApiRunner() {
        apiRunner.close();
    }

    @Test
    void aTenantKeySeesAndActsOnItsOwnTenantOnly() {
        var mine = fixture.integration(false);
        var theirs = fixture.integration(false);
        UUID myRun = completedWebhookRun(mine, "[{\"externalId\":\"m-1\",\"name\":\"Ada\"}]");
        UUID theirRun = completedWebhookRun(theirs, "[{\"externalId\":\"t-1\"}]");
        String myItem = item(admin("GET", "/runs/" + myRun + "/items", null), 0);
        String theirItem = item(admin("GET", "/runs/" + theirRun + "/items", null), 0);

        ApiResponse created = admin("POST", "/keys", Json.object().put("tenantId", mine.tenantId()).put("name", "ci"));
        assertEquals(201, created.status(), created.body());
        String key = Json.parse(created.body()).path("key").asText();
        assertTrue(key.startsWith("rkt_"), key);
        ApiResponse listed = admin("GET", "/keys?tenantId=" + mine.tenantId(), null);
        assertEquals(1, Json.parse(listed.body()).path("keys").size(), listed.body());
        assertFalse(listed.body().contains(key), "the key is shown once, at creation");

        JsonNode session = body(call(key, "GET", "/session", null), 200);
        assertEquals("tenant", session.path("scope").asText());
        assertEquals(mine.tenantId(), session.path("tenantId").asText());
        assertTrue(session.path("can").toString().contains("items:redrive"), session.toString());
        assertFalse(session.path("can").toString().contains("handlers"), session.toString());

        JsonNode runs = body(call(key, "GET", "/runs", null), 200).path("runs");
        assertFalse(runs.isEmpty());
        runs.forEach(run -> assertEquals(mine.tenantId(), run.path("tenantId").asText()));
        assertEquals(0, body(call(key, "GET", "/runs?tenantId=" + theirs.tenantId(), null), 200).path("runs").size());
        body(call(key, "GET", "/runs/" + myRun, null), 200);
        body(call(key, "GET", "/items/" + myItem, null), 200);
        body(call(key, "GET", "/tenants/" + mine.tenantId() + "/integrations/" + mine.integrationKey(), null), 200);
        body(call(key, "GET", "/items?status=succeeded", null), 200).path("items")
                .forEach(item -> assertEquals(mine.tenantId(), item.path("tenantId").asText()));

        // Another tenant's things answer exactly as things that do not exist.
        ApiResponse absent = call(key, "GET", "/runs/" + UUID.randomUUID(), null);
        ApiResponse foreign = call(key, "GET", "/runs/" + theirRun, null);
        assertEquals(404, absent.status());
        assertEquals(404, foreign.status());
        assertEquals(Json.parse(absent.body()).path("error"), Json.parse(foreign.body()).path("error"));
        for (String[] call : new String[][] {
                {"GET", "/runs/" + theirRun + "/items"}, {"POST", "/runs/" + theirRun + "/redrive"},
                {"GET", "/items/" + theirItem}, {"POST", "/items/" + theirItem + "/redrive"},
                {"GET", "/tenants/" + theirs.tenantId() + "/integrations/" + theirs.integrationKey()}}) {
            assertEquals(404, call(key, call[0], call[1], null).status(), String.join(" ", call));
        }
        ObjectNode takeover = Json.object().put("enabled", false);
        assertEquals(404, call(key, "PUT", "/tenants/" + theirs.tenantId() + "/integrations/" + theirs.integrationKey(), takeover).status());
        assertTrue(fixture.runner.integrations().tenantIntegration(theirs.tenantId(), theirs.integrationKey()).orElseThrow().enabled());
        assertEquals(404, call(key, "POST", "/runs", Json.object().put("tenantId", theirs.tenantId())
                .put("integrationKey", theirs.integrationKey()).put("handlerKey", theirs.handlerKey())).status());
        JsonNode tenants = body(call(key, "GET", "/tenants", null), 200).path("tenants");
        assertEquals(1, tenants.size());
        assertEquals(mine.tenantId(), tenants.get(0).path("tenantId").asText());

        // What every tenant shares is the admin's.
        for (String[] call : new String[][] {{"GET", "/handlers"}, {"GET", "/queues"}, {"GET", "/metrics/items"}, {"GET", "/keys"},
                {"POST", "/keys"}, {"GET", "/types/" + mine.integrationKey()}, {"GET", "/breakers/" + mine.integrationKey()},
                {"POST", "/handlers/" + mine.integrationKey() + "/" + mine.handlerKey() + "/pause"}}) {
            ApiResponse response = call(key, call[0], call[1], Json.object());
            assertEquals(403, response.status(), String.join(" ", call) + " " + response.body());
            assertEquals("forbidden", Json.parse(response.body()).path("error").asText());
        }
    }

    /**
     * What the operator decides holds against a tenant key: a tenant integration the admin disabled stays disabled
     * (the tenant may still change its settings by saving it disabled), a type the operator did not open to tenants
     * cannot be subscribed to by a tenant key (the operator subscribes it; then the tenant may change its own), and
     * settings have a size limit.
     */
    @Test
    void aTenantKeyCannotUndoWhatTheOperatorDecided() {
        var integration = fixture.integration(false);
        String tenantPath = "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey();
        String key = body(admin("POST", "/keys", Json.object().put("tenantId", integration.tenantId()).put("name", "t")), 201)
                .path("key").asText();

        assertTrue(body(admin("PUT", tenantPath, Json.object().put("enabled", false)), 200).path("disabledByOperator").asBoolean());
        ApiResponse reEnabled = call(key, "PUT", tenantPath, Json.object().put("enabled", true));
        assertEquals(409, reEnabled.status(), reEnabled.body());
        assertEquals("disabled_by_operator", Json.parse(reEnabled.body()).path("error").asText());
        assertFalse(fixture.runner.integrations().tenantIntegration(integration.tenantId(), integration.integrationKey()).orElseThrow().enabled());
        ObjectNode stillDisabled = Json.object().put("enabled", false);
        stillDisabled.putObject("settings").put("region", "us");
        JsonNode saved = body(call(key, "PUT", tenantPath, stillDisabled), 200);
        assertEquals("us", saved.path("settings").path("region").asText());
        assertTrue(saved.path("disabledByOperator").asBoolean(), "the tenant's own save keeps the operator's disable");
        assertFalse(body(admin("PUT", tenantPath, Json.object().put("enabled", true)), 200).path("disabledByOperator").asBoolean());
        assertTrue(body(call(key, "PUT", tenantPath, Json.object().put("enabled", true)), 200).path("enabled").asBoolean());

        var closed = fixture.integration(false);
        ObjectNode type = (ObjectNode) body(admin("GET", "/types/" + closed.integrationKey(), null), 200);
        assertTrue(type.path("openToTenants").asBoolean(), "types are open to tenants unless the operator says otherwise");
        body(admin("PUT", "/types/" + closed.integrationKey(), type.put("openToTenants", false)), 200);
        String closedPath = "/tenants/" + integration.tenantId() + "/integrations/" + closed.integrationKey();
        ApiResponse subscribed = call(key, "PUT", closedPath, Json.object().put("enabled", true));
        assertEquals(403, subscribed.status(), subscribed.body());
        assertEquals(404, call(key, "GET", closedPath, null).status(), "nothing was created");
        body(admin("PUT", closedPath, Json.object().put("enabled", true)), 200);
        body(call(key, "PUT", closedPath, stillDisabled), 200);

        ObjectNode large = Json.object().put("enabled", true);
        large.putObject("settings").put("blob", "x".repeat(17 * 1024));
        ApiResponse tooLarge = call(key, "PUT", tenantPath, large);
        assertEquals(400, tooLarge.status(), tooLarge.body());
        assertTrue(tooLarge.body().contains("16384"), tooLarge.body());
    }

    @Test
    void aRevokedKeyIsRefusedOnItsNextRequest() {
        var integration = fixture.integration(false);
        JsonNode created = body(admin("POST", "/keys", Json.object().put("tenantId", integration.tenantId()).put("name", "laptop")), 201);
        String key = created.path("key").asText();
        body(call(key, "GET", "/session", null), 200);

        JsonNode revoked = body(admin("DELETE", "/keys/" + created.path("keyId").asText(), null), 200);
        assertNotNull(Instant.parse(revoked.path("revokedAt").asText()));

        assertEquals(401, call(key, "GET", "/session", null).status());
        assertEquals(404, admin("DELETE", "/keys/" + UUID.randomUUID(), null).status());
        assertEquals(401, call(key.substring(0, key.length() - 1) + "x", "GET", "/session", null).status(), "a key one character off");
    }

    @Test
    void runsAreListedNewestFirstInKeysetPagesWithTheirCounts() {
        var integration = fixture.integration(true);
        List<UUID> created = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            created.add(completedWebhookRun(integration, "[{\"externalId\":\"a-" + i + "\"},{\"externalId\":\"b-" + i + "\"}]"));
        }
        List<UUID> listed = new ArrayList<>();
        String next = null;
        do {
            var before = apiCosts.snapshot();
            JsonNode page = body(api("GET", "/runs?tenantId=" + integration.tenantId() + "&limit=2" + (next == null ? "" : "&before=" + next)), 200);
            var cost = apiCosts.snapshot().minus(before);
            assertTrue(cost.sqlStatements() <= 2, "one statement for the page, one for its counts: " + cost);
            assertTrue(page.path("runs").size() <= 2);
            page.path("runs").forEach(run -> {
                listed.add(UUID.fromString(run.path("runId").asText()));
                assertEquals(2, run.path("counts").path("total").asInt(), run.toString());
                assertEquals(2, run.path("counts").path("succeeded").asInt(), run.toString());
                assertEquals("completed", run.path("status").asText());
            });
            next = page.path("next").isNull() ? null : page.path("next").asText();
        } while (next != null);
        assertEquals(created.reversed(), listed, "newest first, every run once");

        assertEquals(5, body(api("GET", "/runs?tenantId=" + integration.tenantId() + "&status=completed&trigger=webhook"), 200).path("runs").size());
        assertEquals(0, body(api("GET", "/runs?tenantId=" + integration.tenantId() + "&trigger=manual"), 200).path("runs").size());
        assertEquals(0, body(api("GET", "/runs?tenantId=" + integration.tenantId() + "&handlerKey=other"), 200).path("runs").size());
    }

    @Test
    void deadItemsAreListedAcrossRunsAndRedrivenOneOrByFilter() {
        var integration = fixture.integration(false);
        var behaviour = fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 422);
        UUID first = webhookRun(integration, "[{\"externalId\":\"d-1\",\"n\":1},{\"externalId\":\"d-2\"},{\"externalId\":\"d-3\"}]");
        UUID second = webhookRun(integration, "[{\"externalId\":\"d-4\"},{\"externalId\":\"d-5\"},{\"externalId\":\"d-6\"}]");
        fixture.awaitRun(first, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));
        fixture.awaitRun(second, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));

        String query = "/items?status=dead&tenantId=" + integration.tenantId() + "&limit=4";
        JsonNode page = body(api("GET", query), 200);
        assertEquals(4, page.path("items").size());
        JsonNode rest = body(api("GET", query + "&after=" + page.path("next").asText()), 200);
        assertEquals(2, rest.path("items").size());
        assertTrue(rest.path("next").isNull());
        List<JsonNode> dead = new ArrayList<>();
        page.path("items").forEach(dead::add);
        rest.path("items").forEach(dead::add);
        Set<String> ids = new HashSet<>();
        Instant previous = Instant.MAX;
        for (JsonNode item : dead) {
            ids.add(item.path("itemId").asText());
            Instant dlqAt = Instant.parse(item.path("dlqAt").asText());
            assertFalse(dlqAt.isAfter(previous), "newest dead first");
            previous = dlqAt;
            assertEquals(integration.handlerKey(), item.path("handlerKey").asText());
            assertTrue(item.path("lastError").asText().contains("422"), item.toString());
            assertTrue(item.path("payload").isMissingNode(), "lists never carry payloads");
        }
        assertEquals(6, ids.size());

        String d1 = dead.stream().filter(item -> item.path("externalId").asText().equals("d-1")).findFirst().orElseThrow()
                .path("itemId").asText();
        JsonNode opened = body(api("GET", "/items/" + d1), 200);
        assertEquals(1, opened.path("payload").path("n").asInt(), opened.toString());
        assertEquals(first.toString(), opened.path("runId").asText());

        behaviour.itemStatus(item -> 200);
        JsonNode one = body(api("POST", "/items/" + d1 + "/redrive"), 202);
        assertEquals(1, one.path("redriven").asInt());
        assertEquals(first.toString(), one.path("runId").asText());
        assertEquals(0, body(api("POST", "/items/" + d1 + "/redrive"), 202).path("redriven").asInt(), "a second click redrives nothing");

        ObjectNode filter = Json.object().put("tenantId", integration.tenantId()).put("handlerKey", integration.handlerKey()).put("limit", 3);
        JsonNode bulk = body(call(fixture.apiKey, "POST", "/redrive", filter), 202);
        assertEquals(3, bulk.path("redriven").asInt(), bulk.toString());
        assertEquals(2, bulk.path("remaining").asInt(), bulk.toString());
        JsonNode drained = body(call(fixture.apiKey, "POST", "/redrive", filter), 202);
        assertEquals(2, drained.path("redriven").asInt(), drained.toString());
        assertEquals(0, drained.path("remaining").asInt());

        fixture.awaitRun(first, RunStatus.COMPLETED, Duration.ofSeconds(30));
        fixture.awaitRun(second, RunStatus.COMPLETED, Duration.ofSeconds(30));
        assertEquals(0, body(api("GET", query), 200).path("items").size());
    }

    @Test
    void handlersShowPauseParkedItemsBreakerAndLimitUseInOneRedisRoundTrip() {
        var integration = fixture.integration(false, Json.object().put("concurrency", 5).put("rate_limit_per_minute", 600));
        completedWebhookRun(integration, "[{\"externalId\":\"h-1\"},{\"externalId\":\"h-2\"},{\"externalId\":\"h-3\"}]");
        String handlerPath = "/handlers/" + integration.integrationKey() + "/" + integration.handlerKey();
        body(api("POST", handlerPath + "/pause"), 200);
        UUID held = webhookRun(integration, "[{\"externalId\":\"h-4\"},{\"externalId\":\"h-5\"}]");
        await().atMost(Duration.ofSeconds(20)).until(() -> handler(integration).path("parked").asInt() == 2);

        var before = apiCosts.snapshot();
        JsonNode handler = handler(integration);
        var cost = apiCosts.snapshot().minus(before);
        assertEquals(1, cost.redisRoundTrips(), "breakers and usage of every handler in one pipelined round trip: " + cost);
        assertEquals(3, cost.sqlStatements(), "types, pauses, parked counts: " + cost);
        assertTrue(handler.path("paused").asBoolean());
        assertNotNull(Instant.parse(handler.path("pausedAt").asText()));
        assertEquals("closed", handler.path("breaker").path("state").asText(), handler.toString());
        assertEquals(0, handler.path("concurrency").path("inUse").asInt(), handler.toString());
        assertEquals(5, handler.path("concurrency").path("limit").asInt());
        assertEquals(3, handler.path("rate").path("usedLastMinute").asInt(), handler.toString());
        assertEquals(600, handler.path("rate").path("limitPerMinute").asInt());

        body(api("POST", handlerPath + "/resume"), 200);
        fixture.awaitRun(held, RunStatus.COMPLETED, Duration.ofSeconds(20));
        assertEquals(0, handler(integration).path("parked").asInt());
        assertFalse(handler(integration).path("paused").asBoolean());
    }

    @Test
    void anOpenBreakerShowsUntilWhenItStaysOpen() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> 503);
        webhookRun(integration, "[{\"externalId\":\"o-1\"},{\"externalId\":\"o-2\"},{\"externalId\":\"o-3\"},"
                + "{\"externalId\":\"o-4\"},{\"externalId\":\"o-5\"},{\"externalId\":\"o-6\"}]");

        await().atMost(Duration.ofSeconds(20)).until(() -> handler(integration).path("breaker").path("state").asText().equals("open"));
        JsonNode breaker = handler(integration).path("breaker");
        Instant openedAt = Instant.parse(breaker.path("openedAt").asText());
        assertEquals(openedAt.plusMillis(30_000), Instant.parse(breaker.path("halfOpenAt").asText()), breaker.toString());
        assertTrue(breaker.path("failures").asInt() >= 5, breaker.toString());
        assertTrue(handler(integration).path("concurrency").path("limit").isNull(), "a limit the type does not set is null");
    }

    @Test
    void chartsCountSuccessesRetriesAndDeathsPerMinute() {
        var integration = fixture.integration(false);
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> switch (item.path("externalId").asText()) {
            case "flaky" -> item.path("attempt").asInt() == 1 ? 503 : 200;
            case "doomed" -> 422;
            default -> 200;
        });
        JsonNode before = body(api("GET", "/metrics/items?minutes=5"), 200);
        UUID runId = webhookRun(integration, "[{\"externalId\":\"fine\"},{\"externalId\":\"flaky\"},{\"externalId\":\"doomed\"}]");
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));

        var cost = apiCosts.snapshot();
        JsonNode after = body(api("GET", "/metrics/items?minutes=5"), 200);
        var spent = apiCosts.snapshot().minus(cost);
        assertEquals(1, spent.sqlStatements(), "outcomes of every minute in one statement: " + spent);
        assertEquals(1, spent.redisRoundTrips(), "deferral counts of every minute in one round trip: " + spent);

        JsonNode minutes = after.path("minutes");
        assertEquals(5, minutes.size());
        Instant current = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
        Instant last = Instant.parse(minutes.get(4).path("at").asText());
        assertTrue(last.equals(current) || last.equals(current.minusSeconds(60)), "the last bucket is the current minute: " + last);
        for (int m = 1; m < 5; m++) {
            assertEquals(Instant.parse(minutes.get(m - 1).path("at").asText()).plusSeconds(60), Instant.parse(minutes.get(m).path("at").asText()));
        }
        assertTrue(grew(before, after, "succeeded") >= 2, after.toString());
        assertTrue(grew(before, after, "retried") >= 1, after.toString());
        assertTrue(grew(before, after, "dead") >= 1, after.toString());
        assertTrue(minutes.get(4).path("deferredBy").has("tenant_limit"), "every reason is always present");
    }

    @Test
    void queuesShowEveryQueueWithSqsCountsAndTheOldestWaitingItem() {
        JsonNode queues = body(api("GET", "/queues"), 200).path("queues");
        List<String> names = new ArrayList<>();
        queues.forEach(queue -> names.add(queue.path("name").asText()));
        assertEquals(List.of("items-webhook", "items-manual", "items-queue", "items-schedule", "runs-manual", "runs-schedule",
                "ingest", "items-dlq", "runs-dlq", "ingest-dlq"), names);
        JsonNode webhook = queues.get(0);
        assertEquals("items", webhook.path("kind").asText());
        assertEquals(1, webhook.path("priority").asInt());
        assertTrue(webhook.path("visible").isIntegralNumber(), webhook.toString());
        assertTrue(webhook.path("inFlight").isIntegralNumber(), webhook.toString());
        assertTrue(webhook.path("delayed").isIntegralNumber(), webhook.toString());
        assertTrue(queues.get(7).path("oldestAgeSeconds").isNull(), "a DLQ holds no waiting items");
    }

    @Test
    void aListedIamPrincipalIsAdminWithoutAKeyAnUnlistedOneIsForbiddenAndNoPrincipalIsRefused() {
        APIGatewayV2HTTPEvent signed = Events.load("api-iam-session.json", APIGatewayV2HTTPEvent.class);
        var response = Lambda.http(new ApiFunction(fixture.runner), signed, TestContext.of("api", 30_000));
        assertEquals(200, response.getStatusCode(), response.getBody());
        assertEquals("admin", Json.parse(response.getBody()).path("scope").asText());

        APIGatewayV2HTTPEvent unlisted = Events.load("api-iam-session.json", APIGatewayV2HTTPEvent.class);
        unlisted.getRequestContext().getAuthorizer().getIam().setUserArn("arn:aws:sts::123456789012:assumed-role/someone/session");
        var refused = Lambda.http(new ApiFunction(fixture.runner), unlisted, TestContext.of("api", 30_000));
        assertEquals(403, refused.getStatusCode(), "verified by the gateway, but listed as no one: " + refused.getBody());

        APIGatewayV2HTTPEvent unsigned = Events.load("api-iam-session.json", APIGatewayV2HTTPEvent.class);
        unsigned.getRequestContext().setAuthorizer(null);
        assertEquals(401, Lambda.http(new ApiFunction(fixture.runner), unsigned, TestContext.of("api", 30_000)).getStatusCode(),
                "a SigV4 header alone proves nothing: only the gateway's request context does");
    }

    private static JsonNode handler(PipelineFixture.Integration integration) {
        for (JsonNode handler : body(api("GET", "/handlers"), 200).path("handlers")) {
            if (handler.path("integrationKey").asText().equals(integration.integrationKey())) {
                return handler;
            }
        }
        throw new AssertionError("no handler " + integration.integrationKey());
    }

    /**
     * What {@code field} grew by from {@code before} to {@code after}, minute by minute: the database
     * holds the other tests' outcomes too, and a minute that passed between the two reads drops its
     * oldest bucket, so whole-window sums would not subtract.
     */
    private static long grew(JsonNode before, JsonNode after, String field) {
        Map<String, Long> earlier = new HashMap<>();
        before.path("minutes").forEach(minute -> earlier.put(minute.path("at").asText(), minute.path(field).asLong()));
        long grown = 0;
        for (JsonNode minute : after.path("minutes")) {
            grown += minute.path(field).asLong() - earlier.getOrDefault(minute.path("at").asText(), 0L);
        }
        return grown;
    }

    private static UUID webhookRun(PipelineFixture.Integration integration, String body) {
        var response = fixture.webhook(fixture.webhookEvent(integration, body));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }

    private static UUID completedWebhookRun(PipelineFixture.Integration integration, String body) {
        UUID runId = webhookRun(integration, body);
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
        return runId;
    }

    private static String item(ApiResponse items, int index) {
        return Json.parse(items.body()).path("items").get(index).path("itemId").asText();
    }

    private static ApiResponse admin(String method, String pathAndQuery, JsonNode body) {
        return call(fixture.apiKey, method, pathAndQuery, body);
    }

    /** An admin call through the root whose costs this class counts. */
    private static ApiResponse api(String method, String pathAndQuery) {
        return handle(apiRunner, fixture.apiKey, method, pathAndQuery, null);
    }

    private static ApiResponse call(String key, String method, String pathAndQuery, JsonNode body) {
        return handle(fixture.runner, key, method, pathAndQuery, body);
    }

    private static ApiResponse handle(Runner runner, String key, String method, String pathAndQuery, JsonNode body) {
        return PipelineFixture.call(runner, key, method, pathAndQuery, body);
    }

    private static JsonNode body(ApiResponse response, int status) {
        assertEquals(status, response.status(), response.body());
        return Json.parse(response.body());
    }
}
