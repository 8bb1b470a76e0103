package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The callbacks' fault run (issue 31 item 4): a delivery of items whose handler answers every first attempt pending
 * and whose partner then loses some callbacks, repeats some (at once, racing each other and the handler's own 202),
 * sends some after the wait ended, and sends a forged one before the real one for others; the scheduler's tick times
 * waits out meanwhile. Then it reads what Runner recorded: nothing lost (every item succeeded), nothing done twice
 * (each item called once per attempt, a second attempt only where the callback was lost or late, one late answer per
 * attempt), and every refusal as the contract says.
 */
class CallbackFaultIT {

    private static final int PER_FAULT = 8;

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of(
            "RUNNER_CALLBACK_BASE_URL", "https://callbacks.example",
            "RUNNER_CALLBACK_SECRET", "callback-key-for-the-fault-run-0123456789"));

    /** What the partner does with an item's callback, by the item's index. */
    enum Fault { NONE, LOST, REPEATED, LATE, FORGED_FIRST }

    @Test
    void lostRepeatedLateAndForgedCallbacksLoseNothingAndDoNothingTwice() {
        var integration = fixture.integration(false, Json.object().put("callback_timeout_ms", 1000));
        Map<String, List<Integer>> answers = new ConcurrentHashMap<>();
        ExecutorService partner = Executors.newVirtualThreadPerTaskExecutor();
        // Attempt 1 answers pending and leaves the callback to the partner; a later attempt answers at once.
        fixture.handlers.handler(integration.handlerKey()).itemStatus(item -> {
            if (item.path("attempt").asInt() > 1) {
                return 200;
            }
            Fault fault = Fault.values()[item.path("payload").path("n").asInt() % Fault.values().length];
            partner.submit(() -> callBack(fault, item, answers.computeIfAbsent(item.path("externalId").asText(),
                    id -> new CopyOnWriteArrayList<>())));
            return 202;
        });
        AtomicBoolean ticking = new AtomicBoolean(true);
        Thread tick = Thread.ofVirtual().start(() -> {
            while (ticking.get()) {
                fixture.runner.callbacks().timeOut();
                sleepQuietly(200); // the scheduler's tick, every 200 ms instead of every minute
            }
        });
        int items = PER_FAULT * Fault.values().length;
        StringBuilder body = new StringBuilder("[");
        for (int n = 0; n < items; n++) {
            body.append(n == 0 ? "" : ",").append("{\"externalId\":\"f-").append(n).append("\",\"n\":").append(n).append('}');
        }
        APIGatewayV2HTTPResponse accepted = fixture.webhook(fixture.webhookEvent(integration, body.append(']').toString()));
        UUID runId = UUID.fromString(Json.parse(accepted.getBody()).path("runId").asText());

        try {
            fixture.awaitRun(runId, RunStatus.COMPLETED, Duration.ofSeconds(60));
            await().atMost(Duration.ofSeconds(20)).until(() -> answers.values().stream().mapToInt(List::size).sum() == expectedAnswers());
        } finally {
            ticking.set(false);
            partner.shutdown();
        }

        List<ItemQueries.ItemView> rows = fixture.runner.itemQueries().list(runId, null, null, 1000);
        List<Runnable> checks = new ArrayList<>();
        checks.add(() -> assertEquals(items, rows.size(), "no item lost"));
        for (ItemQueries.ItemView row : rows) {
            int n = Integer.parseInt(row.externalId().substring(2));
            Fault fault = Fault.values()[n % Fault.values().length];
            int attempts = fault == Fault.LOST || fault == Fault.LATE ? 2 : 1;
            List<Integer> seen = answers.getOrDefault(row.externalId(), List.of());
            checks.add(() -> assertEquals(ItemStatus.SUCCEEDED, row.status(), row.externalId() + " " + fault));
            checks.add(() -> assertEquals(attempts, row.attempts(), row.externalId() + " " + fault + ": attempts"));
            checks.add(() -> assertEquals(attempts, fixture.handlers.timesProcessed(integration.handlerKey(), row.itemId().toString()),
                    row.externalId() + " " + fault + ": called once per attempt"));
            checks.add(() -> assertEquals(expected(fault), answered(seen), row.externalId() + " " + fault + ": " + seen));
        }
        assertAll(checks.stream().map(check -> (org.junit.jupiter.api.function.Executable) check::run));
        long lateAnswers = fixture.runner.database().query("select count(*) from item_callbacks c join execution_items e using (item_id)"
                + " where e.run_id = ?", row -> row.getLong(1), runId).getFirst();
        assertEquals(items, lateAnswers, "one late answer per pending attempt (every first one): a callback's or the timeout's");
    }

    /** How each fault's callbacks are answered, as a multiset of statuses. */
    private static List<Integer> expected(Fault fault) {
        return switch (fault) {
            case NONE -> List.of(200);
            case LOST -> List.of();
            case REPEATED -> List.of(200, 200, 200);
            case LATE -> List.of(410);
            case FORGED_FIRST -> List.of(200, 404);
        };
    }

    /** Every callback the partner sends: each fault's answers, for each of its items. */
    private static int expectedAnswers() {
        return PER_FAULT * java.util.Arrays.stream(Fault.values()).mapToInt(fault -> expected(fault).size()).sum();
    }

    /** A callback's status; an early one (202, before the handler's own 202 was recorded) counts as taken, as 200. */
    private static List<Integer> answered(List<Integer> statuses) {
        return statuses.stream().map(s -> s == 202 ? 200 : s).sorted().toList();
    }

    private static void callBack(Fault fault, JsonNode item, List<Integer> answers) {
        String url = item.path("callbackUrl").asText();
        switch (fault) {
            case NONE -> answers.add(callback(url, "{\"ok\":true}"));
            case LOST -> { }
            case REPEATED -> {
                // Three at once, racing each other and the handler's own 202: one is taken, the others are told it was.
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    threads.add(Thread.ofVirtual().start(() -> answers.add(callback(url, "{\"ok\":true}"))));
                }
                threads.forEach(CallbackFaultIT::joinQuietly);
            }
            case LATE -> {
                UUID itemId = UUID.fromString(item.path("itemId").asText());
                await().atMost(Duration.ofSeconds(30)).until(() -> timedOut(itemId));
                answers.add(callback(url, "{\"ok\":true}"));
            }
            case FORGED_FIRST -> {
                String signature = url.substring(url.lastIndexOf('.') + 1);
                String forged = url.substring(0, url.lastIndexOf('.') + 1) + (signature.charAt(0) == 'A' ? 'B' : 'A') + signature.substring(1);
                answers.add(callback(forged, "{\"ok\":true}"));
                answers.add(callback(url, "{\"ok\":true}"));
            }
        }
    }

    private static boolean timedOut(UUID itemId) {
        return !fixture.runner.database().query("select 1 from item_callbacks where item_id = ? and source = 'timeout'",
                row -> row.getInt(1), itemId).isEmpty();
    }

    private static int callback(String url, String body) {
        return fixture.callback(url, body).getStatusCode();
    }

    private static void joinQuietly(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
