package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cancelling a run on the local runtime with Runner's own functions, over HTTP as an operator would:
 * a 1,000-item run cancelled mid-way calls its handler for no item after those in flight at the
 * answer, and a run of another tenant beside it completes untouched.
 */
class RunCancelIT {

    private static final String SECRET = "it-cancel-webhook-secret";
    private static LocalRuntime runtime;
    private static RunnerApi api;

    @BeforeAll
    static void start() {
        runtime = LocalRuntimeIT.startProject(Map.of(
                "RUNNER_BREAKER_FAILURE_THRESHOLD", "100000",
                "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"));
        api = LocalRuntimeIT.checkedApi(runtime);
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aRunCancelledMidwayMakesNoCallAfterItsInFlightOnesAndLeavesAnotherRunAlone() {
        String integration = "it-cancel";
        String neighbourIntegration = "it-cancel-neighbour";
        String handler = runtime.demo().url(integration, "contacts");
        api.putType(integration, handler, 10, 600000);
        api.putType(neighbourIntegration, runtime.demo().url(neighbourIntegration, "contacts"), 10, 600000);
        // Every call takes 50 ms, 10 at a time: the 1,000 items take at least five seconds, the four pages a fraction of it.
        api.putTenant("t-cancel", integration, SECRET, Json.object().put("pages", 4).put("pageSize", 250).put("delayMs", 50));
        api.putTenant("t-cancel-neighbour", neighbourIntegration, SECRET,
                Json.object().put("pages", 2).put("pageSize", 50).put("delayMs", 20));

        String runId = api.startRun("t-cancel", integration);
        String neighbour = api.startRun("t-cancel-neighbour", neighbourIntegration);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    JsonNode counts = api.run(runId).path("counts");
                    return counts.path("total").asInt() == 1000 && counts.path("succeeded").asInt() >= 100;
                });

        JsonNode answer = RunnerApi.require(api.post("/runs/" + runId + "/cancel", Json.object()), 202).body();
        long callsAtAnswer = runtime.demo().itemCalls(integration);
        long inFlight = answer.path("counts").path("processing").asLong();
        assertEquals("cancelled", answer.path("status").asText(), answer.toString());
        assertTrue(answer.path("counts").path("cancelled").asInt() > 0, answer.toString());
        assertEquals("cancelled", RunnerApi.require(api.post("/runs/" + runId + "/cancel", Json.object()), 202)
                .body().path("status").asText(), "a second cancel is answered the same");

        // Every message still on the tier is received and dropped; the calls in flight end and are recorded.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            JsonNode counts = api.run(runId).path("counts");
            return counts.path("processing").asInt() == 0 && counts.path("queued").asInt() == 0
                    && counts.path("retrying").asInt() == 0 && itemsManualTierIsEmpty();
        });
        long calls = runtime.demo().itemCalls(integration);
        assertTrue(calls - callsAtAnswer <= inFlight,
                (calls - callsAtAnswer) + " calls after the answer, but only " + inFlight + " items were in flight");
        JsonNode run = api.run(runId);
        JsonNode counts = run.path("counts");
        assertEquals("cancelled", run.path("status").asText());
        assertEquals(1000, counts.path("total").asInt(), run.toString());
        assertEquals(1000, counts.path("succeeded").asInt() + counts.path("cancelled").asInt(), run.toString());
        assertTrue(counts.path("succeeded").asLong() <= calls, run + " after " + calls + " calls");

        JsonNode other = awaitCompleted(neighbour);
        assertEquals(100, other.path("counts").path("succeeded").asInt(), other.toString());
        assertEquals(100, runtime.demo().itemCalls(neighbourIntegration));
        var finished = api.post("/runs/" + neighbour + "/cancel", Json.object());
        assertEquals(409, finished.status(), finished.body().toString());
        assertEquals("conflict", finished.body().path("error").asText());
        assertEquals("completed", api.run(neighbour).path("status").asText());
    }

    private static boolean itemsManualTierIsEmpty() {
        for (JsonNode queue : RunnerApi.require(api.get("/queues"), 200).body().path("queues")) {
            if (queue.path("kind").asText().equals("items") && queue.path("tier").asText().equals("manual")) {
                return queue.path("visible").asInt(-1) == 0 && queue.path("inFlight").asInt(-1) == 0
                        && queue.path("delayed").asInt(-1) == 0;
            }
        }
        throw new AssertionError("no items-manual tier in GET /queues");
    }

    private static JsonNode awaitCompleted(String runId) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> "completed".equals(api.run(runId).path("status").asText()));
        return api.run(runId);
    }
}
