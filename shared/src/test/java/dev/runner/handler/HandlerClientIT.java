package dev.runner.handler;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostTracker;
import dev.runner.integration.Direction;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.testing.FakeDns;
import dev.runner.testing.HostileHandler;
import dev.runner.testing.HostileHandler.Act;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.ThrowingSupplier;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HandlerClient against a handler service that misbehaves on purpose, over real HTTP on loopback:
 * every call returns by its deadline with a classified outcome, whatever the handler does. (IT:
 * real sockets, and the test JVM's resolver is {@link FakeDns}.)
 */
class HandlerClientIT {

    /** The time left of calls that are to time out. */
    private static final Duration DEADLINE = Duration.ofMillis(500);
    /** The time left of calls that are to be answered: ample, so that a loaded machine does not turn answers into timeouts. */
    private static final Duration AMPLE = Duration.ofSeconds(5);
    private static final Outcome.Failed TIMED_OUT = new Outcome.Failed("handler timed out after 500 ms", true, true);
    private static final long FIFTY_MB = 50L * 1024 * 1024;

    private static HostileHandler hostile;
    /** Allows loopback, where the hostile handler listens. */
    private static HandlerClient client;

    @BeforeAll
    static void start() {
        hostile = HostileHandler.start();
        client = new HandlerClient("hostile-test-secret", HandlerUrlPolicy.parse("127.0.0.0/8,::1/128"), Clock.systemUTC(), CostTracker.NONE);
        // The first call of a JVM loads the HTTP client's classes: not within a test's deadline.
        assertEquals(new Outcome.Succeeded(), process("warm-up", Act.json(200, "{}")));
    }

    @AfterAll
    static void stop() {
        hostile.close();
    }

    @Test
    void aBodyThatStallsAfterItsHeadersTimesOutEveryCallAtItsDeadlineAndDropsTheConnection() {
        Act stall = new Act.StallAfterHeaders(200, 1000);
        assertEquals(TIMED_OUT, process("stall-process", stall, DEADLINE));
        assertEquals(Map.of("i-1", TIMED_OUT, "i-2", TIMED_OUT), batch("stall-batch", stall, List.of("i-1", "i-2"), DEADLINE));
        assertEquals(TIMED_OUT, fetchFailure("stall-fetch", stall, DEADLINE));
        for (String name : List.of("stall-process", "stall-batch", "stall-fetch")) {
            await().atMost(AMPLE).until(() -> hostile.ended(name).stream().anyMatch(HostileHandler.Ended::closedByClient));
        }
    }

    @Test
    void aHandlerThatSendsNothingTimesOutAtTheEarlierOfItsTimeoutAndTheCallersTimeLeft() {
        String url = hostile.url("silent", new Act.StallBeforeHeaders());
        HandlerSpec patient = spec(url, false, 10_000);
        assertEquals(new Outcome.Failed("handler timed out after 300 ms", true, true),
                returns(DEADLINE, () -> client.process("crm", patient, item(), "i-1", Duration.ofMillis(300))));
        HandlerSpec hasty = spec(url, false, 200);
        assertEquals(new Outcome.Failed("handler timed out after 200 ms", true, true),
                returns(AMPLE, () -> client.process("crm", hasty, item(), "i-1", AMPLE)));
    }

    @Test
    void aFiftyMegabyteFetchPageIsAPermanentFailureAndIsNotReadToItsEnd() {
        for (boolean announced : new boolean[] {true, false}) {
            String name = "flood-fetch-" + announced;
            Outcome.Failed failure = fetchFailure(name, new Act.Flood(200, FIFTY_MB, announced));
            assertFalse(failure.retryable(), failure.error());
            assertTrue(failure.error().contains("larger than 1024 KiB"), failure.error());
            await().atMost(AMPLE).until(() -> !hostile.ended(name).isEmpty());
            HostileHandler.Ended ended = hostile.ended(name).getFirst();
            assertTrue(ended.closedByClient() && ended.bodyBytesSent() < FIFTY_MB / 2, ended.toString());
        }
    }

    @Test
    void aFiftyMegabyteBatchAnswerFailsEveryItemRetryably() {
        Outcome over = new Outcome.Failed("process-batch answer larger than 1024 KiB", true);
        assertEquals(Map.of("i-1", over, "i-2", over), batch("flood-batch", new Act.Flood(200, FIFTY_MB, false)));
    }

    @Test
    void aFiftyMegabyteErrorKeepsAnExcerptAndAFiftyMegabyteSuccessIsASuccess() {
        Outcome error = process("flood-error", new Act.Flood(503, FIFTY_MB, true));
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, error);
        assertTrue(failed.retryable());
        assertTrue(failed.error().startsWith("handler answered 503") && failed.error().length() < 400, failed.error());
        assertEquals(new Outcome.Succeeded(), process("flood-ok", new Act.Flood(200, FIFTY_MB, false)));
    }

    @Test
    void retryAfterOfAnySizeIsBoundedAndGarbageMeansAnOrdinaryRetry() {
        Outcome huge = process("retry-huge", Act.tooManyRequests("99999999999999999"));
        assertEquals(Duration.ofMinutes(15), assertInstanceOf(Outcome.Deferred.class, huge).delay());
        Outcome zero = process("retry-zero", Act.tooManyRequests("0"));
        assertEquals(Duration.ofSeconds(1), assertInstanceOf(Outcome.Deferred.class, zero).delay());
        for (String garbage : List.of("soon", "-5", "1e3", "Wed, 32 Foo 2026 99:00:00 GMT")) {
            Outcome outcome = process("retry-garbage", Act.tooManyRequests(garbage));
            assertTrue(assertInstanceOf(Outcome.Failed.class, outcome).retryable(), garbage);
        }
        assertTrue(assertInstanceOf(Outcome.Failed.class, batch("retry-batch", Act.tooManyRequests("x")).get("i-1")).retryable());
    }

    @Test
    void malformedAnswersAreClassifiedNeverThrown() {
        byte[] invalidUtf8 = {'{', '"', 'i', 't', 'e', 'm', 's', '"', ':', '[', '"', (byte) 0xC3, (byte) 0x28, '"', ']', '}'};
        for (Act act : List.of(Act.json(200, "{\"items\":["), Act.json(200, "[1,2]"), Act.json(200, ""), Act.bytes(200, invalidUtf8),
                Act.json(200, "{\"items\":[{\"externalId\":{\"nested\":1}}]}"), Act.json(200, "{\"items\":[1e999999]}"),
                Act.json(200, "{\"items\":[],\"nextCursor\":42}"), Act.json(200, "[".repeat(5000)))) {
            Outcome.Failed failure = fetchFailure("malformed-fetch", act);
            assertFalse(failure.retryable(), failure.error());
            assertTrue(failure.error().startsWith("fetch answer unusable"), failure.error());
        }
        for (Act act : List.of(Act.json(200, "{\"results\":"), Act.json(200, ""), Act.bytes(200, invalidUtf8), Act.json(204, ""),
                Act.json(200, "{\"results\":{\"i-1\":true}}"))) {
            batch("malformed-batch", act).values().forEach(outcome ->
                    assertTrue(assertInstanceOf(Outcome.Failed.class, outcome).retryable(), outcome.toString()));
        }
        assertEquals(new Outcome.Succeeded(), process("malformed-process", Act.bytes(200, invalidUtf8)));
        assertEquals(new Outcome.Succeeded(), process("empty-process", Act.json(204, "")));
    }

    @Test
    void batchResultsAreSettledPerItemWhateverIdsAndTypesTheyHold() {
        Map<String, Outcome> outcomes = batch("odd-results", Act.json(200, """
                {"results":[
                  {"itemId":"i-1","ok":true},
                  {"itemId":"i-2","ok":true},{"itemId":"i-2","ok":false},
                  {"itemId":"someone-else","ok":true},
                  {"itemId":"i-3","ok":"yes"},
                  {"itemId":"i-4","ok":false,"error":"bad\\u0000row\\nnext","retryable":false},
                  {"itemId":5,"ok":true}, 7, null
                ]}"""), List.of("i-1", "i-2", "i-3", "i-4", "i-5"));
        assertEquals(new Outcome.Succeeded(), outcomes.get("i-1"));
        assertEquals(new Outcome.Failed("process-batch answer has 2 results for this item", true), outcomes.get("i-2"));
        assertEquals(new Outcome.Failed("process-batch result for this item has no true/false ok", true), outcomes.get("i-3"));
        assertEquals(new Outcome.Failed("bad row next", false), outcomes.get("i-4"));
        assertEquals(new Outcome.Failed("process-batch answer has no result for this item", true), outcomes.get("i-5"));
        assertEquals(5, outcomes.size());
    }

    @Test
    void aConnectionResetIsARetryableFailure() {
        Act midBody = new Act.ResetMidBody(200, 10_000, "{\"items\":[".getBytes(StandardCharsets.UTF_8));
        assertTrue(fetchFailure("reset-fetch", midBody).retryable());
        batch("reset-batch", midBody).values().forEach(outcome -> assertTrue(assertInstanceOf(Outcome.Failed.class, outcome).retryable()));
        Outcome.Failed beforeHeaders = assertInstanceOf(Outcome.Failed.class, process("reset-early", new Act.ResetBeforeHeaders()));
        assertTrue(beforeHeaders.retryable(), beforeHeaders.error());
        assertTrue(beforeHeaders.error().startsWith("handler unreachable"), beforeHeaders.error());
    }

    @Test
    void aRedirectIsAPermanentFailureNeitherFollowedNorEchoed() {
        String target = hostile.url("redirect-target", Act.json(200, "{}"));
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, process("redirecting", Act.redirect(target + "/process")));
        assertFalse(failed.retryable());
        assertTrue(failed.error().contains("302") && failed.error().contains("does not follow redirects"), failed.error());
        assertFalse(failed.error().contains("secret-looking") || failed.error().contains("redirect-target"), failed.error());
        assertEquals(0, hostile.requests("redirect-target"));
        assertFalse(fetchFailure("redirecting-fetch", Act.redirect(target + "/fetch")).retryable());
    }

    @Test
    void aLoopbackHandlerIsRefusedWithoutAConnectionUnlessLoopbackIsAllowed() {
        HandlerClient strict = new HandlerClient("hostile-test-secret", HandlerUrlPolicy.publicOnly(), Clock.systemUTC(), CostTracker.NONE);
        int accepted = hostile.accepted();
        String url = hostile.url("never-called", Act.json(200, "{\"secret\":\"internal\"}"));
        Outcome.Failed refused = assertInstanceOf(Outcome.Failed.class,
                returns(AMPLE, () -> strict.process("crm", spec(url, false, 10_000), item(), "i-1", AMPLE)));
        assertFalse(refused.retryable());
        assertTrue(refused.error().startsWith("handler URL refused") && refused.error().contains("127.0.0.1"), refused.error());
        assertFalse(refused.error().contains("internal"), refused.error());
        assertEquals(accepted, hostile.accepted());
    }

    @Test
    void aNameThatTurnsToLoopbackAfterTheTypeWasSavedIsRefusedWhenCalled() {
        String host = "rebind-after-save.test";
        String url = "https://" + host + ":" + hostile.port() + "/rebind";
        FakeDns.answer(host, "1.1.1.1");
        HandlerUrlPolicy publicOnly = HandlerUrlPolicy.publicOnly();
        assertEquals(java.util.Optional.empty(), publicOnly.check(URI.create(url)), "public when the type is saved");
        FakeDns.answer(host, "127.0.0.1");
        HandlerClient strict = new HandlerClient("hostile-test-secret", publicOnly, Clock.systemUTC(), CostTracker.NONE);
        int accepted = hostile.accepted();

        Outcome.Failed refused = assertInstanceOf(Outcome.Failed.class,
                returns(AMPLE, () -> strict.process("crm", spec(url, false, 10_000), item(), "i-1", AMPLE)));

        assertFalse(refused.retryable());
        assertTrue(refused.error().contains(host + " resolves to 127.0.0.1, a loopback address"), refused.error());
        assertEquals(accepted, hostile.accepted());
        FakeDns.forget(host);
    }

    @Test
    void aCallConnectsToTheAddressItsCheckAcceptedNotToWhatTheNameResolvesToNext() {
        String host = "rebind-at-connect.test";
        hostile.url("pinned", Act.json(200, "{}"));
        String url = "http://" + host + ":" + hostile.port() + "/pinned";
        // The check sees the one allowed address; every later lookup (a client that resolves again to connect) another.
        FakeDns.answerThen(host, List.of("127.0.0.1"), List.of("127.0.0.2"));
        HandlerClient oneAddress = new HandlerClient("hostile-test-secret", HandlerUrlPolicy.parse("127.0.0.1/32"), Clock.systemUTC(),
                CostTracker.NONE);

        assertEquals(new Outcome.Succeeded(), returns(AMPLE, () -> oneAddress.process("crm", spec(url, false, 10_000), item(), "i-1", AMPLE)));
        assertEquals(1, hostile.requests("pinned"));

        // The next call's check sees the other address: refused for good, without a connection.
        int accepted = hostile.accepted();
        Outcome.Failed refused = assertInstanceOf(Outcome.Failed.class,
                returns(AMPLE, () -> oneAddress.process("crm", spec(url, false, 10_000), item(), "i-2", AMPLE)));
        assertFalse(refused.retryable(), refused.error());
        assertTrue(refused.error().contains(host + " resolves to 127.0.0.2, a loopback address"), refused.error());
        assertEquals(accepted, hostile.accepted());
        assertEquals(1, hostile.requests("pinned"));
        FakeDns.forget(host);
    }

    private static Outcome process(String name, Act act) {
        return process(name, act, AMPLE);
    }

    private static Outcome process(String name, Act act, Duration timeLeft) {
        HandlerSpec spec = spec(hostile.url(name, act), false, 10_000);
        return returns(timeLeft, () -> client.process("crm", spec, item(), "i-1", timeLeft));
    }

    private static Map<String, Outcome> batch(String name, Act act) {
        return batch(name, act, List.of("i-1", "i-2"));
    }

    private static Map<String, Outcome> batch(String name, Act act, List<String> itemIds) {
        return batch(name, act, itemIds, AMPLE);
    }

    private static Map<String, Outcome> batch(String name, Act act, List<String> itemIds, Duration timeLeft) {
        HandlerSpec spec = spec(hostile.url(name, act), true, 10_000);
        List<ObjectNode> items = itemIds.stream().map(id -> item().put("itemId", id)).toList();
        return returns(timeLeft, () -> client.processBatch("crm", spec, items, itemIds, timeLeft));
    }

    private static Outcome.Failed fetchFailure(String name, Act act) {
        return fetchFailure(name, act, AMPLE);
    }

    private static Outcome.Failed fetchFailure(String name, Act act, Duration timeLeft) {
        HandlerSpec spec = spec(hostile.url(name, act), false, 10_000);
        return returns(timeLeft, () -> assertThrows(HandlerClient.HandlerCallException.class,
                () -> client.fetch("crm", spec, Json.object(), timeLeft)).failure());
    }

    /** A hang guard at ten times the call's time left, not a timing assertion: a call that returns says itself whether it timed out. */
    private static <T> T returns(Duration timeLeft, ThrowingSupplier<T> call) {
        return assertTimeoutPreemptively(timeLeft.multipliedBy(10), call);
    }

    private static HandlerSpec spec(String url, boolean batch, int timeoutMs) {
        return new HandlerSpec("hostile", URI.create(url), Direction.INBOUND, batch, new HandlerSpec.Configs(0, 0, 10, timeoutMs));
    }

    private static ObjectNode item() {
        return Json.object().put("itemId", "i-1").put("externalId", "e-1");
    }
}
