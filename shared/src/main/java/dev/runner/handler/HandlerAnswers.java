package dev.runner.handler;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a handler's answer means (docs/handler-contract.md), decided without I/O. Whatever a handler sends, the
 * result is an outcome or a page, never an exception: an answer is the handler's, and a hostile or
 * broken one must not take other handlers' items down with it.
 *
 * <p>Classification: 2xx success; 3xx permanent (redirects are not followed: a handler URL that
 * redirects could send Runner to an internal address, so the type must name the real address);
 * 429 with a usable Retry-After a deferral, without one a retryable failure; 408, 425, 5xx and 1xx
 * retryable; other 4xx permanent.
 */
final class HandlerAnswers {

    /** The most Runner reads of a fetch page or a process-batch answer: 1 MiB. */
    static final int RESULT_LIMIT = 1 << 20;
    /** The most Runner reads of any other body (errors, /process answers): only an excerpt is kept. */
    static final int EXCERPT_LIMIT = 8 << 10;
    /** Retry-After below this (0 included) waits this long, so a handler cannot make Runner loop. */
    static final Duration SHORTEST_RETRY_AFTER = Duration.ofSeconds(1);
    /** Retry-After above this waits this long: SQS delays a message 15 minutes at most (DelaySeconds 900). */
    static final Duration LONGEST_RETRY_AFTER = Duration.ofMinutes(15);
    /** As webhooks cap it: a longer id would break the Postgres index on (run_id, external_id). */
    static final int MAX_EXTERNAL_ID = 512;
    /** The cursor travels in the run's SQS message (256 KiB at most) and its row. */
    static final int MAX_CURSOR = 8 << 10;
    private static final int EXCERPT_CHARS = 300;
    private static final int HANDLER_ERROR_CHARS = 1000;
    private static final Pattern DELAY_SECONDS = Pattern.compile("[0-9]+");
    /** Control, format, surrogate and separator characters: none belongs in an error line (NUL cannot even be stored). */
    private static final Pattern UNPRINTABLE = Pattern.compile("[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Z}\\s]+");

    private HandlerAnswers() {}

    /**
     * A handler's answer as read.
     *
     * @param retryAfter    the first Retry-After header, or null
     * @param body          the body up to its limit
     * @param bodyOverLimit true when the handler sent more than the limit
     */
    record Reply(int status, String retryAfter, byte[] body, boolean bodyOverLimit) {}

    /** What a {@code /process} answer says of its item: 202 is pending (a callback completes it), the rest as {@link #outcome}. */
    static Outcome processOutcome(Reply reply, Instant now) {
        return reply.status() == 202 ? new Outcome.Pending() : outcome(reply, now);
    }

    /** What the status (and for 429 the Retry-After) says about the call. */
    static Outcome outcome(Reply reply, Instant now) {
        int status = reply.status();
        if (status >= 200 && status < 300) {
            return new Outcome.Succeeded();
        }
        if (status >= 300 && status < 400) {
            // No excerpt: the body of a redirect is not the handler's answer, and is never echoed.
            return new Outcome.Failed("handler answered " + status + ", a redirect; Runner does not follow redirects:"
                    + " set the handler URL to the address that answers", false);
        }
        String error = "handler answered " + status + excerpt(reply.body());
        if (status == 429) {
            return retryAfter(reply.retryAfter(), now)
                    .<Outcome>map(delay -> new Outcome.Deferred(delay, error))
                    .orElseGet(() -> new Outcome.Failed(error, true));
        }
        boolean retryable = status >= 500 || status == 408 || status == 425 || status < 200;
        return new Outcome.Failed(error, retryable);
    }

    /**
     * How long a Retry-After asks to wait (RFC 9110 10.2.3), between {@link #SHORTEST_RETRY_AFTER}
     * and {@link #LONGEST_RETRY_AFTER}; empty when absent or unreadable (then the usual backoff
     * applies). Read: delay-seconds (digits only, any length), and the HTTP-date in its preferred
     * IMF-fixdate form; the obsolete RFC 850 and asctime date forms count as unreadable.
     */
    static Optional<Duration> retryAfter(String header, Instant now) {
        if (header == null) {
            return Optional.empty();
        }
        String value = header.strip();
        if (DELAY_SECONDS.matcher(value).matches()) {
            String digits = value.replaceFirst("^0+(?=.)", "");
            // Past 9 digits it is past the cap anyway, and would overflow a long or Duration.toMillis.
            Duration asked = digits.length() > 9 ? LONGEST_RETRY_AFTER : Duration.ofSeconds(Long.parseLong(digits));
            return Optional.of(bounded(asked));
        }
        try {
            Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            return Optional.of(bounded(Duration.between(now, at)));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static Duration bounded(Duration asked) {
        if (asked.compareTo(SHORTEST_RETRY_AFTER) < 0) {
            return SHORTEST_RETRY_AFTER;
        }
        return asked.compareTo(LONGEST_RETRY_AFTER) > 0 ? LONGEST_RETRY_AFTER : asked;
    }

    /**
     * The page of a successful {@code /fetch}, or why it cannot be used. Every such failure is
     * permanent: the handler would send the same page for the same cursor again, so the run fails
     * at once with the reason rather than after retries.
     */
    static HandlerClient.Page page(Reply reply) throws HandlerClient.HandlerCallException {
        if (reply.bodyOverLimit()) {
            throw unusablePage("larger than " + RESULT_LIMIT / 1024 + " KiB: answer fewer items per page");
        }
        try {
            JsonNode body = Json.requireObject(Json.parse(reply.body()), "the answer");
            JsonNode items = body.get("items");
            if (items == null || !items.isArray()) {
                throw new Json.InvalidJsonException("items must be an array");
            }
            List<HandlerClient.FetchedItem> fetched = new ArrayList<>(items.size());
            for (int i = 0; i < items.size(); i++) {
                fetched.add(fetchedItem(items.get(i), "items[" + i + "]"));
            }
            String cursor = Json.optionalText(body, "nextCursor");
            if (cursor != null && (cursor.length() > MAX_CURSOR || cursor.indexOf('\0') >= 0)) {
                throw new Json.InvalidJsonException("nextCursor must be at most " + MAX_CURSOR + " characters, without \\u0000");
            }
            return new HandlerClient.Page(fetched, cursor);
        } catch (Json.InvalidJsonException e) {
            throw unusablePage(e.getMessage());
        }
    }

    private static HandlerClient.FetchedItem fetchedItem(JsonNode item, String where) {
        Json.requireObject(item, where);
        JsonNode externalId = item.get("externalId");
        if (externalId == null || !(externalId.isTextual() || externalId.isIntegralNumber()) || externalId.asText().isBlank()) {
            throw new Json.InvalidJsonException(where + ".externalId must be a non-empty string or an integer");
        }
        String id = externalId.asText();
        if (id.length() > MAX_EXTERNAL_ID) {
            throw new Json.InvalidJsonException(where + ".externalId is longer than " + MAX_EXTERNAL_ID + " characters");
        }
        JsonNode payload = item.has("payload") ? item.get("payload") : Json.object();
        if (id.indexOf('\0') >= 0 || holdsNul(payload)) {
            throw new Json.InvalidJsonException(where + " holds \\u0000, which Postgres cannot store");
        }
        return new HandlerClient.FetchedItem(id, payload);
    }

    private static boolean holdsNul(JsonNode node) {
        if (node.isTextual()) {
            return node.textValue().indexOf('\0') >= 0;
        }
        for (var field : node.properties()) {
            if (field.getKey().indexOf('\0') >= 0 || holdsNul(field.getValue())) {
                return true;
            }
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                if (holdsNul(element)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static HandlerClient.HandlerCallException unusablePage(String why) {
        return new HandlerClient.HandlerCallException(new Outcome.Failed("fetch answer unusable: " + clean(why, EXCERPT_CHARS), false));
    }

    /**
     * Outcomes by itemId of a {@code /process-batch} answer, one for every asked itemId. A call
     * that failed, or a 2xx other than 200, fails every item alike. Every flaw of a 200 answer is
     * a retryable failure of the items it touches: the handler may well have done the work, and
     * asking again with the same Idempotency-Key lets it say so properly (after the last attempt
     * the item is dead with the reason). Results for itemIds not asked are ignored; an item with
     * no result, several results, or a result without a boolean {@code ok} is not known to be done.
     */
    static Map<String, Outcome> batch(Reply reply, List<String> itemIds, Instant now) {
        Outcome call = outcome(reply, now);
        Outcome all = !(call instanceof Outcome.Succeeded) ? call
                : reply.status() != 200 ? new Outcome.Failed("process-batch answered " + reply.status() + ", not 200", true)
                : reply.bodyOverLimit() ? new Outcome.Failed("process-batch answer larger than " + RESULT_LIMIT / 1024 + " KiB", true)
                : null;
        Map<String, Outcome> outcomes = new LinkedHashMap<>();
        if (all != null) {
            itemIds.forEach(id -> outcomes.put(id, all));
            return outcomes;
        }
        Set<String> asked = new HashSet<>(itemIds);
        Map<String, List<JsonNode>> answered = new HashMap<>();
        try {
            JsonNode results = Json.requireObject(Json.parse(reply.body()), "the answer").get("results");
            if (results == null || !results.isArray()) {
                throw new Json.InvalidJsonException("results must be an array");
            }
            for (JsonNode result : results) {
                JsonNode itemId = result.get("itemId");
                if (itemId != null && itemId.isTextual() && asked.contains(itemId.textValue())) {
                    answered.computeIfAbsent(itemId.textValue(), id -> new ArrayList<>()).add(result);
                }
            }
        } catch (Json.InvalidJsonException e) {
            Outcome unreadable = new Outcome.Failed("process-batch answer unreadable: " + clean(e.getMessage(), EXCERPT_CHARS), true);
            itemIds.forEach(id -> outcomes.put(id, unreadable));
            return outcomes;
        }
        for (String itemId : itemIds) {
            List<JsonNode> results = answered.getOrDefault(itemId, List.of());
            outcomes.put(itemId, switch (results.size()) {
                case 0 -> new Outcome.Failed("process-batch answer has no result for this item", true);
                case 1 -> result(results.getFirst());
                default -> new Outcome.Failed("process-batch answer has " + results.size() + " results for this item", true);
            });
        }
        return outcomes;
    }

    private static Outcome result(JsonNode result) {
        if ("pending".equals(result.path("status").asText(null))) {
            return new Outcome.Pending();
        }
        JsonNode ok = result.get("ok");
        if (ok == null || !ok.isBoolean()) {
            return new Outcome.Failed("process-batch result for this item has no true/false ok", true);
        }
        if (ok.booleanValue()) {
            return new Outcome.Succeeded();
        }
        JsonNode error = result.get("error");
        String message = error != null && error.isTextual() ? clean(error.textValue(), HANDLER_ERROR_CHARS) : "";
        JsonNode retryable = result.get("retryable");
        // Only an explicit false makes a failure permanent: a malformed flag must not lose the item.
        return new Outcome.Failed(message.isEmpty() ? "handler reported failure" : message,
                retryable == null || !retryable.isBoolean() || retryable.booleanValue());
    }

    /** {@code ": <first characters>"} of an error body, or nothing; invalid UTF-8 reads as U+FFFD. */
    static String excerpt(byte[] body) {
        if (body == null || body.length == 0) {
            return "";
        }
        String text = clean(new String(body, StandardCharsets.UTF_8), EXCERPT_CHARS);
        return text.isEmpty() ? "" : ": " + text;
    }

    /** One printable line of at most {@code max} characters (then "…"). */
    static String clean(String text, int max) {
        String flat = UNPRINTABLE.matcher(text).replaceAll(" ").strip();
        if (flat.length() <= max) {
            return flat;
        }
        int end = Character.isHighSurrogate(flat.charAt(max - 1)) ? max - 1 : max;
        return flat.substring(0, end) + "…";
    }
}
