package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Redis resilience layer end to end through the item worker: breaker during an outage,
 * pause and resume, tenant fairness. Real Redis, Postgres, SQS and handler; timings shortened.
 */
class ResilienceIT {

    private static final long BREAKER_OPEN_MS = 3_000;

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_BREAKER_OPEN_MS", String.valueOf(BREAKER_OPEN_MS), "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000",
                "RUNNER_TENANT_DEFER_MS", "1000"));

    /**
     * The calls made before the breaker opens are the burst already admitted when the first failures
     * come back (every item worker's lanes at that moment: more or fewer with the machine's pace), so
     * the test bounds what the breaker decides: nothing reaches the handler while it is open, and
     * once it goes half-open only the probes it allows in flight (RUNNER_BREAKER_HALF_OPEN_SUCCESSES,
     * 2). Open for 3 s of a 4 s outage, it goes half-open inside the outage once at most.
     */
    @Test
    void aFourSecondOutageLosesNoItemAndTheBreakerSparesTheHandler() {
        var integration = fixture.integration(false);
        // The outage starts at the handler's first call, however long the webhook's items take to reach it.
        AtomicLong outageEnds = new AtomicLong();
        Queue<Long> outageCalls = new ConcurrentLinkedQueue<>();
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> {
            long now = System.currentTimeMillis();
            outageEnds.compareAndSet(0, now + 4_000);
            if (now < outageEnds.get()) {
                outageCalls.add(now);
                return 503;
            }
            return 200;
        });

        UUID runId = fixture.webhookRun(integration, IntStream.range(0, 30).mapToObj(i -> "{\"externalId\":\"o-" + i + "\"}")
                .collect(Collectors.joining(",", "[", "]")));
        // Open for 3 s: polled every 20 ms, its first opening is seen.
        JsonNode opened = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> breaker(integration).path("openedAt"), JsonNode::isTextual);
        long openedAt = Instant.parse(opened.asText()).toEpochMilli();

        JsonNode run = awaitRunJson(runId, "completed", Duration.ofSeconds(40));
        assertEquals(30, run.path("counts").path("succeeded").asInt());
        assertEquals(0, run.path("counts").path("dead").asInt());
        List<Long> sinceOpening = outageCalls.stream().map(at -> at - openedAt).filter(ms -> ms > 0).toList();
        System.out.printf("outage: %d handler calls during the 4 s outage; after the breaker opened, at +%s ms%n",
                outageCalls.size(), sinceOpening);
        // A call admitted a moment before the opening may start a moment after it.
        assertEquals(List.of(), sinceOpening.stream().filter(ms -> ms > 100 && ms < BREAKER_OPEN_MS).toList(), "calls while open");
        assertTrue(sinceOpening.stream().filter(ms -> ms >= BREAKER_OPEN_MS).count() <= 2, "half-open probes: " + sinceOpening);
        assertEquals("closed", breaker(integration).path("state").asText());
    }

    private static JsonNode breaker(PipelineFixture.Integration integration) {
        return Json.parse(fixture.api("GET", "/breakers/" + integration.integrationKey(), null).body());
    }

    @Test
    void aPausedHandlerParksItsItemsWhileAnotherCompletesAndResumeFinishesTheRun() {
        var paused = fixture.integration(false);
        var other = fixture.integration(false);
        ApiResponse pause = fixture.api("POST", "/handlers/" + paused.integrationKey() + "/" + paused.handlerKey() + "/pause", null);
        assertEquals(200, pause.status(), pause.body());

        UUID pausedRun = fixture.webhookRun(paused, "[{\"externalId\":\"p-1\"},{\"externalId\":\"p-2\"},{\"externalId\":\"p-3\"}]");
        await().atMost(Duration.ofSeconds(20)).until(() -> fixture.runJson(pausedRun).path("counts").path("parked").asInt() == 3);
        UUID otherRun = fixture.webhookRun(other, "[{\"externalId\":\"q-1\"}]");
        awaitRunJson(otherRun, "completed", Duration.ofSeconds(20));

        JsonNode parked = fixture.runJson(pausedRun);
        assertEquals("running", parked.path("status").asText());
        assertEquals(0, parked.path("counts").path("dead").asInt());
        assertEquals(0, fixture.handlers.itemCalls(paused.handlerKey()).size(), "a paused handler gets no call");

        ApiResponse resume = fixture.api("POST", "/handlers/" + paused.integrationKey() + "/" + paused.handlerKey() + "/resume", null);
        assertEquals(3, Json.parse(resume.body()).path("resumed").asInt(), resume.body());
        JsonNode done = awaitRunJson(pausedRun, "completed", Duration.ofSeconds(20));
        assertEquals(3, done.path("counts").path("succeeded").asInt());
        assertEquals(0, done.path("counts").path("parked").asInt());
    }

    @Test
    void aSmallTenantIsNotHeldBackByAThrottledBigOne() {
        var big = fixture.integration(true);
        var small = fixture.integration(true);
        var warmUp = fixture.integration(true);
        // 2,000 items: twice the tenant's limit a minute, and a fetch short enough to end well inside that minute.
        fixture.handlers.handler(big.handlerKey()).pages(4, 500);
        fixture.handlers.handler(small.handlerKey()).pages(4, 50);
        fixture.handlers.handler(warmUp.handlerKey()).pages(4, 50);

        // A first run pays for class loading and JIT; "alone" is measured warm, as the comparison is.
        timeRun(warmUp);
        long alone = timeRun(small);
        UUID bigRun = manualRun(big);
        awaitRunJson(bigRun, "running", Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(60)).until(() -> fixture.runJson(bigRun).path("counts").path("succeeded").asInt() >= 1000);
        long withBigBacklog = timeRun(small);

        JsonNode bigNow = fixture.runJson(bigRun);
        System.out.printf("fairness: small tenant's 200 items alone %d ms, beside a throttled 2,000-item tenant %d ms (%.2fx); big tenant %d succeeded so far%n",
                alone, withBigBacklog, (double) withBigBacklog / alone, bigNow.path("counts").path("succeeded").asInt());
        assertTrue(bigNow.path("counts").path("succeeded").asInt() <= 1100, "the big tenant is held to its limit");
        assertTrue(withBigBacklog <= alone * 1.5 + 250, "alone " + alone + " ms, beside the backlog " + withBigBacklog + " ms");
    }

    private long timeRun(PipelineFixture.Integration integration) {
        long start = System.nanoTime();
        UUID runId = manualRun(integration);
        awaitRunJson(runId, "completed", Duration.ofSeconds(60));
        return (System.nanoTime() - start) / 1_000_000;
    }

    private UUID manualRun(PipelineFixture.Integration integration) {
        ApiResponse created = fixture.api("POST", "/runs", Json.object().put("tenantId", integration.tenantId())
                .put("integrationKey", integration.integrationKey()).put("handlerKey", integration.handlerKey()));
        assertEquals(202, created.status(), created.body());
        return UUID.fromString(Json.parse(created.body()).path("runId").asText());
    }

    private static JsonNode awaitRunJson(UUID runId, String status, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(20)).until(() -> fixture.runJson(runId).path("status").asText().equals(status));
        return fixture.runJson(runId);
    }
}
