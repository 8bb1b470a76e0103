package dev.runner.handler;

import dev.runner.handler.HandlerAnswers.Reply;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HandlerAnswersTest {

    private static final Instant NOW = Instant.parse("2026-10-21T07:28:00Z");

    @Test
    void statusesAreClassifiedAsTheContractSays() {
        assertEquals(new Outcome.Succeeded(), outcome(200, null, ""));
        assertEquals(new Outcome.Succeeded(), outcome(204, null, ""));
        for (int retryable : new int[] {500, 502, 503, 599, 408, 425, 429, 101}) {
            assertTrue(assertInstanceOf(Outcome.Failed.class, outcome(retryable, null, "")).retryable(), "status " + retryable);
        }
        for (int permanent : new int[] {400, 401, 403, 404, 409, 422, 301, 302, 307, 308}) {
            assertFalse(assertInstanceOf(Outcome.Failed.class, outcome(permanent, null, "")).retryable(), "status " + permanent);
        }
    }

    @Test
    void aProcessAnswer202IsPendingAndABatchResultSaysPendingItself() {
        assertEquals(new Outcome.Pending(), HandlerAnswers.processOutcome(reply(202, null, ""), NOW));
        assertEquals(new Outcome.Succeeded(), HandlerAnswers.processOutcome(reply(200, null, ""), NOW));
        assertEquals(new Outcome.Succeeded(), HandlerAnswers.outcome(reply(202, null, ""), NOW), "a fetch's 202 is a page as before");
        var outcomes = HandlerAnswers.batch(reply(200, null,
                "{\"results\":[{\"itemId\":\"a\",\"status\":\"pending\"},{\"itemId\":\"b\",\"ok\":true}]}"), java.util.List.of("a", "b"), NOW);
        assertEquals(new Outcome.Pending(), outcomes.get("a"));
        assertEquals(new Outcome.Succeeded(), outcomes.get("b"));
    }

    @Test
    void aRedirectSaysSoAndEchoesNothingOfItsBody() {
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, outcome(302, null, "go to http://169.254.169.254/"));
        assertEquals("handler answered 302, a redirect; Runner does not follow redirects: set the handler URL to the address that answers",
                failed.error());
    }

    @Test
    void anErrorKeepsAPrintableExcerptOfItsBody() {
        String body = "{\"error\":\"db\u0000down\",\n\t\"trace\":\"" + "x".repeat(1000) + "\"}\u202E";
        String error = assertInstanceOf(Outcome.Failed.class, outcome(500, null, body)).error();
        assertTrue(error.startsWith("handler answered 500: {\"error\":\"db down\", \"trace\":\"xxx"), error);
        assertEquals("handler answered 500: ".length() + 300 + 1, error.length());
        assertTrue(error.endsWith("…"));
        byte[] invalidUtf8 = {'o', 'k', (byte) 0xC3, (byte) 0x28};
        assertEquals("handler answered 400: ok\uFFFD(", ((Outcome.Failed) HandlerAnswers.outcome(new Reply(400, null, invalidUtf8, false), NOW)).error());
    }

    @Test
    void retryAfterIsBoundedBetweenOneSecondAndFifteenMinutes() {
        assertEquals(Optional.of(Duration.ofSeconds(30)), HandlerAnswers.retryAfter("30", NOW));
        assertEquals(Optional.of(Duration.ofSeconds(30)), HandlerAnswers.retryAfter(" 30 ", NOW));
        assertEquals(Optional.of(Duration.ofSeconds(1)), HandlerAnswers.retryAfter("0", NOW));
        assertEquals(Optional.of(Duration.ofMinutes(15)), HandlerAnswers.retryAfter("900", NOW));
        assertEquals(Optional.of(Duration.ofMinutes(15)), HandlerAnswers.retryAfter("901", NOW));
        assertEquals(Optional.of(Duration.ofMinutes(15)), HandlerAnswers.retryAfter("99999999999999999", NOW));
        assertEquals(Optional.of(Duration.ofMinutes(15)), HandlerAnswers.retryAfter("9".repeat(400), NOW));
        assertEquals(Optional.of(Duration.ofSeconds(5)), HandlerAnswers.retryAfter("0000000000000000000005", NOW));
    }

    @Test
    void retryAfterAsAnHttpDateCountsFromNow() {
        assertEquals(Optional.of(Duration.ofSeconds(90)), HandlerAnswers.retryAfter("Wed, 21 Oct 2026 07:29:30 GMT", NOW));
        assertEquals(Optional.of(Duration.ofSeconds(1)), HandlerAnswers.retryAfter("Wed, 21 Oct 2026 07:00:00 GMT", NOW), "in the past");
        assertEquals(Optional.of(Duration.ofMinutes(15)), HandlerAnswers.retryAfter("Fri, 31 Dec 9999 23:59:59 GMT", NOW));
    }

    @Test
    void retryAfterThatCannotBeReadMeansNone() {
        for (String garbage : new String[] {"", "soon", "-5", "+5", "5.5", "1e3", "0x10", "٣", "Wednesday, 21-Oct-26 07:29:30 GMT",
                "Wed Oct 21 07:29:30 2026", "Wed, 32 Oct 2026 07:29:30 GMT"}) {
            assertEquals(Optional.empty(), HandlerAnswers.retryAfter(garbage, NOW), garbage);
        }
        assertEquals(Optional.empty(), HandlerAnswers.retryAfter(null, NOW));
    }

    @Test
    void a429WithARetryAfterIsADeferralAndWithoutOneARetryableFailure() {
        assertEquals(Duration.ofSeconds(1), assertInstanceOf(Outcome.Deferred.class, outcome(429, "0", "")).delay());
        assertTrue(assertInstanceOf(Outcome.Failed.class, outcome(429, "later", "")).retryable());
        assertTrue(assertInstanceOf(Outcome.Failed.class, outcome(429, null, "")).retryable());
    }

    @Test
    void aPageIsReadWithItsItemsAndCursor() throws Exception {
        HandlerClient.Page page = HandlerAnswers.page(ok("""
                {"items":[{"externalId":"a","payload":{"n":1}},{"externalId":42}],"nextCursor":"p2"}"""));
        assertEquals(2, page.items().size());
        assertEquals("a", page.items().get(0).externalId());
        assertEquals(1, page.items().get(0).payload().path("n").asInt());
        assertEquals("42", page.items().get(1).externalId());
        assertTrue(page.items().get(1).payload().isObject());
        assertEquals("p2", page.nextCursor());
        assertEquals(null, HandlerAnswers.page(ok("{\"items\":[],\"nextCursor\":null}")).nextCursor());
    }

    @Test
    void aPageRunnerCannotStoreIsAPermanentFailureNamingTheFlaw() {
        Map<String, String> flaws = Map.ofEntries(
                Map.entry("", "body is empty"),
                Map.entry("{\"items\":", "not valid JSON"),
                Map.entry("[]", "the answer must be a JSON object"),
                Map.entry("{}", "items must be an array"),
                Map.entry("{\"items\":[7]}", "items[0] must be a JSON object"),
                Map.entry("{\"items\":[{}]}", "items[0].externalId must be a non-empty string or an integer"),
                Map.entry("{\"items\":[{\"externalId\":\" \"}]}", "items[0].externalId must be"),
                Map.entry("{\"items\":[{\"externalId\":1.5}]}", "items[0].externalId must be"),
                Map.entry("{\"items\":[{\"externalId\":\"" + "x".repeat(513) + "\"}]}", "items[0].externalId is longer than 512 characters"),
                Map.entry("{\"items\":[{\"externalId\":\"a\\u0000b\"}]}", "items[0] holds \\u0000"),
                Map.entry("{\"items\":[{\"externalId\":\"a\",\"payload\":{\"deep\":[{\"x\":\"\\u0000\"}]}}]}", "items[0] holds \\u0000"),
                Map.entry("{\"items\":[{\"externalId\":\"a\",\"payload\":{\"\\u0000\":1}}]}", "items[0] holds \\u0000"),
                Map.entry("{\"items\":[],\"nextCursor\":7}", "nextCursor must be a string"),
                Map.entry("{\"items\":[],\"nextCursor\":\"" + "c".repeat(8193) + "\"}", "nextCursor must be at most 8192 characters"),
                Map.entry("[".repeat(3000), "not valid JSON"));
        flaws.forEach((body, flaw) -> {
            Outcome.Failed failure = assertThrows(HandlerClient.HandlerCallException.class, () -> HandlerAnswers.page(ok(body)),
                    body.length() > 80 ? body.substring(0, 80) : body).failure();
            assertFalse(failure.retryable());
            assertTrue(failure.error().startsWith("fetch answer unusable: ") && failure.error().contains(flaw), failure.error());
            assertTrue(failure.error().length() < 400, failure.error());
        });
        Outcome.Failed tooLarge = assertThrows(HandlerClient.HandlerCallException.class,
                () -> HandlerAnswers.page(new Reply(200, null, new byte[10], true))).failure();
        assertEquals(new Outcome.Failed("fetch answer unusable: larger than 1024 KiB: answer fewer items per page", false), tooLarge);
    }

    @Test
    void aBatchAnswerGivesEveryAskedItemOneOutcome() {
        Map<String, Outcome> outcomes = HandlerAnswers.batch(ok("""
                {"results":[{"itemId":"a","ok":true},{"itemId":"b","ok":false,"error":"no such contact","retryable":false},
                            {"itemId":"c","ok":false},{"itemId":"d","ok":false,"error":42,"retryable":"no"}]}"""),
                List.of("a", "b", "c", "d"), NOW);
        assertEquals(Map.of(
                "a", new Outcome.Succeeded(),
                "b", new Outcome.Failed("no such contact", false),
                "c", new Outcome.Failed("handler reported failure", true),
                "d", new Outcome.Failed("handler reported failure", true)), outcomes);
    }

    @Test
    void aBatchAnswerThatIsNotA200WithReadableResultsFailsEveryItemAlike() {
        List<String> ids = List.of("a", "b");
        assertEquals(Map.of("a", new Outcome.Failed("process-batch answered 202, not 200", true),
                "b", new Outcome.Failed("process-batch answered 202, not 200", true)), HandlerAnswers.batch(reply(202, null, ""), ids, NOW));
        assertEquals(new Outcome.Failed("process-batch answer larger than 1024 KiB", true),
                HandlerAnswers.batch(new Reply(200, null, new byte[0], true), ids, NOW).get("b"));
        assertEquals(new Outcome.Failed("handler answered 400: {\"error\":\"bad\"}", false),
                HandlerAnswers.batch(reply(400, null, "{\"error\":\"bad\"}"), ids, NOW).get("a"));
        assertInstanceOf(Outcome.Deferred.class, HandlerAnswers.batch(reply(429, "5", ""), ids, NOW).get("a"));
        for (String unreadable : new String[] {"", "nope", "{}", "{\"results\":{}}", "[]"}) {
            HandlerAnswers.batch(ok(unreadable), ids, NOW).values().forEach(outcome -> {
                Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, outcome);
                assertTrue(failed.retryable() && failed.error().startsWith("process-batch answer unreadable: "), failed.error());
            });
        }
    }

    @Test
    void batchResultsForUnaskedDuplicatedOrMistypedItemsDoNotCount() {
        Map<String, Outcome> outcomes = HandlerAnswers.batch(ok("""
                {"results":[{"itemId":"a","ok":true},{"itemId":"a","ok":true},{"itemId":"zzz","ok":true},
                            {"itemId":["b"],"ok":true},{"itemId":"b","ok":1},"c",null,{"itemId":"c","ok":null}]}"""),
                List.of("a", "b", "c", "d"), NOW);
        assertEquals(new Outcome.Failed("process-batch answer has 2 results for this item", true), outcomes.get("a"));
        assertEquals(new Outcome.Failed("process-batch result for this item has no true/false ok", true), outcomes.get("b"));
        assertEquals(new Outcome.Failed("process-batch result for this item has no true/false ok", true), outcomes.get("c"));
        assertEquals(new Outcome.Failed("process-batch answer has no result for this item", true), outcomes.get("d"));
        assertEquals(List.of("a", "b", "c", "d"), List.copyOf(outcomes.keySet()));
    }

    @Test
    void aHandlersErrorTextIsOnePrintableLineOfBoundedLength() {
        String error = ((Outcome.Failed) HandlerAnswers.batch(ok("{\"results\":[{\"itemId\":\"a\",\"ok\":false,\"error\":\"line1\\r\\nline2\\u0000\\u001b[31m"
                + "e".repeat(2000) + "\"}]}"), List.of("a"), NOW).get("a")).error();
        assertTrue(error.startsWith("line1 line2 [31meee"), error);
        assertEquals(1001, error.length());
        assertEquals("😀…", HandlerAnswers.clean("😀😀", 2), "a character is never cut in half");
    }

    private static Outcome outcome(int status, String retryAfter, String body) {
        return HandlerAnswers.outcome(reply(status, retryAfter, body), NOW);
    }

    private static Reply ok(String body) {
        return reply(200, null, body);
    }

    private static Reply reply(int status, String retryAfter, String body) {
        return new Reply(status, retryAfter, body.getBytes(StandardCharsets.UTF_8), false);
    }
}
