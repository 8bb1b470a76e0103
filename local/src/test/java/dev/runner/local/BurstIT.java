package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.local.demo.DemoIntegration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bursts are held (issue 7): a hundred requests at the same instant, on the local runtime with the
 * template's pool sizes, are all accepted (none waits out a pool and answers 503) and every run they
 * start ends.
 */
class BurstIT {

    private static final int BURST = 100;
    private static final int TENANTS = 10;
    private static final String INTEGRATION = "it-burst";
    private static final String SECRET = "burst-webhook-secret";
    private static LocalRuntime runtime;
    private static RunnerApi api;

    @BeforeAll
    static void start() {
        runtime = LocalRuntimeIT.startProject(Map.of());
        api = LocalRuntimeIT.checkedApi(runtime);
        api.putType(INTEGRATION, runtime.demo().url(INTEGRATION, DemoIntegration.HANDLER_KEY), 20, 600_000);
        for (int t = 0; t < TENANTS; t++) {
            api.putTenant(tenant(t), INTEGRATION, SECRET, Json.object().put("pages", 1).put("pageSize", 5));
        }
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void aHundredConcurrentRunRequestsAreAllAcceptedAndEveryRunEnds() throws Exception {
        List<RunnerApi.Answer> answers = atOnce(i -> api.post("/runs", Json.object().put("tenantId", tenant(i % TENANTS))
                .put("integrationKey", INTEGRATION).put("handlerKey", DemoIntegration.HANDLER_KEY)));

        assertEveryAnswer2xxThenEveryRunEnds(answers);
    }

    @Test
    void aHundredConcurrentWebhooksAreAllAcceptedAndEveryRunEnds() throws Exception {
        List<RunnerApi.Answer> answers = atOnce(i -> api.webhook(tenant(i % TENANTS), INTEGRATION, SECRET,
                "{\"externalId\":\"burst-" + i + "\",\"name\":\"item " + i + "\"}"));

        assertEveryAnswer2xxThenEveryRunEnds(answers);
    }

    /** Sends {@code BURST} requests released together (one virtual thread each, behind one gate). */
    private static List<RunnerApi.Answer> atOnce(IntFunction<RunnerApi.Answer> request) throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        List<Future<RunnerApi.Answer>> pending = new ArrayList<>();
        try (ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < BURST; i++) {
                int n = i;
                pending.add(senders.submit(() -> {
                    gate.await();
                    return request.apply(n);
                }));
            }
            gate.countDown();
            List<RunnerApi.Answer> answers = new ArrayList<>();
            for (Future<RunnerApi.Answer> answer : pending) {
                answers.add(answer.get());
            }
            return answers;
        }
    }

    private static void assertEveryAnswer2xxThenEveryRunEnds(List<RunnerApi.Answer> answers) {
        List<String> refused = answers.stream().filter(a -> a.status() / 100 != 2).map(a -> a.status() + " " + a.body()).toList();
        assertTrue(refused.isEmpty(), refused.size() + " of " + BURST + " refused: " + refused);
        Set<String> open = ConcurrentHashMap.newKeySet();
        answers.forEach(a -> open.add(a.body().path("runId").asText()));
        assertEquals(BURST, open.size(), "one run per request");
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(250)).until(() -> {
            open.removeIf(runId -> {
                JsonNode run = api.run(runId);
                return !run.path("finishedAt").isNull() && !run.path("finishedAt").isMissingNode();
            });
            return open.isEmpty();
        });
    }

    private static String tenant(int t) {
        return "t-burst-" + t;
    }
}
