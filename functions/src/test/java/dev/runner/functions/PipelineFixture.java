package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostMeter;
import dev.runner.functions.telemetry.InvocationMetrics;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.run.Run;
import dev.runner.run.RunJob;
import dev.runner.run.RunRef;
import dev.runner.run.RunStatus;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One stack of real servers for a test class: queues, a Runner, a fake handler service and the
 * event source pump. Each {@link #integration} is a new tenant, type and handler, so tests in a
 * class never see each other's data. Register it as a static {@code @RegisterExtension} field:
 * it starts with the class and closes after its last test.
 */
final class PipelineFixture implements AutoCloseable, org.junit.jupiter.api.extension.AfterAllCallback {

    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    final TestStack stack;
    final CostMeter costs = new CostMeter();
    final Runner runner;
    final FakeHandler handlers;
    final EventSourcePump pump;
    final String apiKey;

    PipelineFixture(Map<String, String> overrides) {
        stack = TestStack.create(overrides);
        // The tests play every function on one root and also call the core directly (a tick, a sweep):
        // bind all the functions' grants up front so what is allowed does not depend on which ran first.
        runner = new Runner(stack.config(), Clock.systemUTC(), costs, InvocationMetrics.INSTANCE).serve(ApiFunction.GRANTS).serve(WebhookFunction.GRANTS)
                .serve(SchedulerFunction.GRANTS).serve(RunWorkerFunction.GRANTS).serve(ItemWorkerFunction.GRANTS)
                .serve(IngestFunction.GRANTS).serve(DeadLetterFunction.GRANTS);
        handlers = FakeHandler.start(stack.environment().get("RUNNER_HANDLER_SIGNING_SECRET"));
        pump = new EventSourcePump(stack, runner);
        apiKey = stack.environment().get("RUNNER_API_KEY");
    }

    /**
     * Another root on this stack, its environment changed by {@code overrides}: a process with a
     * fault of its own (SQS refusing its sends to a queue that does not exist), or held to one
     * function's grants. The caller binds its grants and closes it.
     */
    Runner root(Map<String, String> overrides) {
        Map<String, String> environment = new HashMap<>(stack.environment());
        environment.putAll(overrides);
        return new Runner(RunnerConfig.from(environment), Clock.systemUTC());
    }

    /** A tenant with its own integration type holding one handler at the fake handler service. */
    record Integration(String tenantId, String integrationKey, String handlerKey, String webhookSecret) {}

    Integration integration(boolean batch) {
        return integration(batch, Json.object().put("batch_size", 10));
    }

    Integration integration(boolean batch, ObjectNode configs) {
        int n = SEQUENCE.incrementAndGet();
        String suffix = stack.name() + "-" + n;
        var integration = new Integration("tenant-" + suffix, "crm-" + suffix, "leads-" + suffix, StandardWebhooks.SECRET_PREFIX
                + java.util.Base64.getEncoder().encodeToString(("key-" + suffix + "-0123456789").getBytes(StandardCharsets.UTF_8)));
        ObjectNode type = Json.object().put("name", "CRM " + n);
        ObjectNode handler = type.putObject("handlers").putObject(integration.handlerKey());
        handler.put("url", handlers.url(integration.handlerKey())).put("direction", "inbound").put("batch", batch);
        handler.set("configs", configs);
        expectOk(api("PUT", "/types/" + integration.integrationKey(), type));
        ObjectNode tenant = Json.object().put("enabled", true).put("webhookSecret", integration.webhookSecret());
        tenant.putObject("settings").put("region", "eu");
        expectOk(api("PUT", "/tenants/" + integration.tenantId() + "/integrations/" + integration.integrationKey(), tenant));
        return integration;
    }

    ApiResponse api(String method, String path, JsonNode body) {
        return runner.api().handle(new ApiRequest(method, path, Map.of(), Map.of("authorization", "Bearer " + apiKey), Map.of(),
                body == null ? null : Json.writeBytes(body)));
    }

    /** A management API call through {@code runner}'s API with bearer {@code key}; {@code pathAndQuery} may carry a query string. */
    static ApiResponse call(Runner runner, String key, String method, String pathAndQuery, JsonNode body) {
        int question = pathAndQuery.indexOf('?');
        String path = question < 0 ? pathAndQuery : pathAndQuery.substring(0, question);
        Map<String, String> query = new HashMap<>();
        if (question >= 0) {
            for (String pair : pathAndQuery.substring(question + 1).split("&")) {
                int equals = pair.indexOf('=');
                query.put(pair.substring(0, equals), pair.substring(equals + 1));
            }
        }
        return runner.api().handle(new ApiRequest(method, path, Map.of(), Map.of("authorization", "Bearer " + key), query,
                body == null ? null : Json.writeBytes(body)));
    }

    private static void expectOk(ApiResponse response) {
        if (response.status() != 200) {
            throw new IllegalStateException("setup call failed: " + response.status() + " " + response.body());
        }
    }

    /** events/webhook.json aimed at an integration, with {@code body} signed now with its secret under a new webhook-id. */
    APIGatewayV2HTTPEvent webhookEvent(Integration integration, String body) {
        return webhookEvent(integration, body, "msg_" + UUID.randomUUID());
    }

    /** events/webhook.json aimed at an integration, with {@code body} signed now with its secret (Standard Webhooks). */
    APIGatewayV2HTTPEvent webhookEvent(Integration integration, String body, String webhookId) {
        APIGatewayV2HTTPEvent event = Events.load("webhook.json", APIGatewayV2HTTPEvent.class);
        String path = "/webhooks/" + integration.tenantId() + "/" + integration.integrationKey() + "/" + integration.handlerKey();
        event.setRawPath(path);
        event.getRequestContext().getHttp().setPath(path);
        event.setPathParameters(Map.of("tenantId", integration.tenantId(), "integrationKey", integration.integrationKey(),
                "handlerKey", integration.handlerKey()));
        event.setBody(body);
        long now = Instant.now().getEpochSecond();
        Map<String, String> headers = new HashMap<>(event.getHeaders());
        headers.putAll(StandardWebhooks.headers(List.of(integration.webhookSecret()), webhookId, now, body.getBytes(StandardCharsets.UTF_8)));
        event.setHeaders(headers);
        return event;
    }

    APIGatewayV2HTTPResponse webhook(APIGatewayV2HTTPEvent event) {
        return Lambda.http(new WebhookFunction(runner), event, TestContext.of("webhook", 30_000));
    }

    /** POST {url} (an item's callbackUrl, or a forgery of one) as API Gateway hands the callback route to WebhookFunction. */
    APIGatewayV2HTTPResponse callback(String url, String body) {
        String path = java.net.URI.create(url).getPath();
        APIGatewayV2HTTPEvent event = Events.load("webhook.json", APIGatewayV2HTTPEvent.class);
        event.setRawPath(path);
        event.setRouteKey("POST /callbacks/{token}");
        event.getRequestContext().getHttp().setPath(path);
        event.setPathParameters(Map.of("token", path.substring("/callbacks/".length())));
        event.setHeaders(Map.of("content-type", "application/json"));
        event.setBody(body);
        return Lambda.http(new WebhookFunction(runner), event, TestContext.of("webhook", 30_000));
    }

    /** A signed webhook delivery of {@code body}, accepted: the run it started. */
    UUID webhookRun(Integration integration, String body) {
        var response = webhook(webhookEvent(integration, body));
        assertEquals(202, response.getStatusCode(), response.getBody());
        return UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
    }

    /** A running manual run of {@code count} items of the tenant, stored as a fan-out stores them; not sent (the test plays SQS). */
    List<ItemJob> storedItems(Integration integration, String tenant, int count) {
        RunJob run = new RunJob(UUID.randomUUID(), tenant, integration.integrationKey(), integration.handlerKey(), Direction.INBOUND,
                Trigger.MANUAL, null);
        RunRef ref = new RunRef(run.runId(), tenant, integration.integrationKey(), integration.handlerKey(), Direction.INBOUND, Trigger.MANUAL);
        return runner.database().inTransaction(connection -> {
            runner.runStore().insert(connection, run, RunStatus.RUNNING, null);
            return runner.itemStore().insert(connection, ref, IntStream.range(0, count)
                    .mapToObj(i -> new ItemStore.NewItem(tenant + "-" + i, Json.object().put("i", i))).toList());
        });
    }

    /** {@code GET /runs/{runId}}'s body. */
    JsonNode runJson(UUID runId) {
        return Json.parse(api("GET", "/runs/" + runId, null).body());
    }

    Run awaitRun(UUID runId, RunStatus status, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(50))
                .until(() -> runner.runStore().find(runId).map(Run::status).orElse(null) == status);
        return runner.runStore().find(runId).orElseThrow();
    }

    @Override
    public void afterAll(org.junit.jupiter.api.extension.ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        pump.close();
        handlers.close();
        runner.close();
        stack.close();
    }
}
