package dev.runner.functions;

import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stated Redis-down policy end to end: fail open, nothing lost, pauses still held from Postgres. */
class RedisDownIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_REDIS_URL", "redis://127.0.0.1:" + closedPort()));

    @Test
    void itemsStillFlowWithoutRedis() {
        var integration = fixture.integration(true);
        var response = fixture.webhook(fixture.webhookEvent(integration, "[{\"externalId\":\"a\"},{\"externalId\":\"b\"}]"));
        assertEquals(202, response.getStatusCode(), response.getBody());
        UUID runId = UUID.fromString(Json.parse(response.getBody()).path("runId").asText());
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(30));
        assertEquals(2, fixture.handlers.itemCalls(integration.handlerKey()).stream().mapToLong(c -> dev.runner.testing.FakeHandler.items(c).size()).sum());
    }

    @Test
    void aPauseHoldsFromPostgresWhileRedisIsAway() {
        var integration = fixture.integration(false);
        var pause = fixture.api("POST", "/handlers/" + integration.integrationKey() + "/" + integration.handlerKey() + "/pause", null);
        // Recorded in Postgres, not in Redis: the caller is told to retry, so the pause outlives Redis' return.
        assertEquals(503, pause.status(), pause.body());
        var response = fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"held\"}"));
        UUID runId = UUID.fromString(Json.parse(response.getBody()).path("runId").asText());

        await().atMost(Duration.ofSeconds(20)).until(() ->
                Json.parse(fixture.api("GET", "/runs/" + runId, null).body()).path("counts").path("parked").asInt() == 1);
        assertTrue(fixture.handlers.itemCalls(integration.handlerKey()).isEmpty());

        fixture.api("POST", "/handlers/" + integration.integrationKey() + "/" + integration.handlerKey() + "/resume", null);
        fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(20));
    }

    @Test
    void operatorViewsSayUnknownInsteadOfFailingWhileRedisIsAway() {
        var integration = fixture.integration(false);
        var handlers = fixture.api("GET", "/handlers", null);
        assertEquals(200, handlers.status(), handlers.body());
        var body = Json.parse(handlers.body());
        assertEquals("unavailable", body.path("redis").asText());
        var handler = java.util.stream.StreamSupport.stream(body.path("handlers").spliterator(), false)
                .filter(h -> h.path("integrationKey").asText().equals(integration.integrationKey())).findFirst().orElseThrow();
        assertTrue(handler.path("breaker").isNull(), "unknown, not closed: " + handler);
        assertTrue(handler.path("concurrency").path("inUse").isNull(), handler.toString());

        var tenants = Json.parse(fixture.api("GET", "/tenants", null).body());
        assertTrue(tenants.path("tenants").get(0).path("deferred").isNull(), tenants.toString());
        var metrics = Json.parse(fixture.api("GET", "/metrics/items", null).body());
        assertEquals(60, metrics.path("minutes").size());
        assertTrue(metrics.path("minutes").get(59).path("deferred").isNull(), "deferrals unknown, outcomes still counted");
        assertTrue(metrics.path("minutes").get(59).path("succeeded").isIntegralNumber());
    }

    private static int closedPort() {
        try (var socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
