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

    private static int closedPort() {
        try (var socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
