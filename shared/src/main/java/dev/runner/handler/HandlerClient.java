package dev.runner.handler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostTracker;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.security.Signature;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * Runner's side of the handler contract (DESIGN 3.3): {@code /fetch}, {@code /process} and
 * {@code /process-batch} over HTTP POST, every call signed, every item call carrying
 * {@code Idempotency-Key}. Answers are classified here, once: 2xx success; 5xx, timeouts and
 * connection errors retryable; 4xx permanent except 408/425/429; 429 with Retry-After a deferral.
 */
public final class HandlerClient {

    private final HttpClient http;
    private final String signingSecret;
    private final Clock clock;
    private final CostTracker costs;

    public HandlerClient(String signingSecret, Clock clock, CostTracker costs) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
        this.signingSecret = signingSecret;
        this.clock = clock;
        this.costs = costs;
    }

    /** One page of a run's items. */
    public record Page(List<FetchedItem> items, String nextCursor) {}

    public record FetchedItem(String externalId, JsonNode payload) {}

    /** A failed handler call, classified. */
    public static final class HandlerCallException extends Exception {
        private final Outcome.Failed failure;

        public HandlerCallException(Outcome.Failed failure) {
            super(failure.error());
            this.failure = failure;
        }

        public Outcome.Failed failure() {
            return failure;
        }
    }

    public Page fetch(HandlerSpec handler, ObjectNode request) throws HandlerCallException {
        Answer answer = post(handler.endpoint("fetch"), handler, request, null, Duration.ofMillis(handler.configs().timeoutMs()));
        Outcome outcome = answer.outcome();
        if (!(outcome instanceof Outcome.Succeeded)) {
            throw new HandlerCallException(outcome instanceof Outcome.Failed f ? f
                    : new Outcome.Failed("fetch deferred by the handler (429)", true));
        }
        try {
            JsonNode body = Json.requireObject(Json.parse(answer.body()), "fetch answer");
            JsonNode items = body.get("items");
            if (items == null || !items.isArray()) {
                throw new Json.InvalidJsonException("fetch answer: items must be an array");
            }
            List<FetchedItem> fetched = new ArrayList<>(items.size());
            for (JsonNode item : items) {
                Json.requireObject(item, "fetch answer item");
                JsonNode externalId = item.get("externalId");
                if (externalId == null || !(externalId.isTextual() || externalId.isIntegralNumber()) || externalId.asText().isBlank()) {
                    throw new Json.InvalidJsonException("fetch answer: every item needs an externalId");
                }
                fetched.add(new FetchedItem(externalId.asText(), item.has("payload") ? item.get("payload") : Json.object()));
            }
            return new Page(fetched, Json.optionalText(body, "nextCursor"));
        } catch (Json.InvalidJsonException e) {
            // A handler that answers garbage will likely do so again: not worth retrying.
            throw new HandlerCallException(new Outcome.Failed("handler " + e.getMessage(), false));
        }
    }

    /** {@code /process} for one item. */
    public Outcome process(HandlerSpec handler, ObjectNode item, String itemId, Duration timeLeft) {
        ObjectNode request = Json.object();
        request.set("item", item);
        return post(handler.endpoint("process"), handler, request, itemId, timeLeft).outcome();
    }

    /**
     * {@code /process-batch}: outcomes by itemId. A non-200 answer fails every item alike; an
     * item the answer leaves out is a retryable failure (the handler may not have seen it).
     */
    public Map<String, Outcome> processBatch(HandlerSpec handler, List<ObjectNode> items, List<String> itemIds, Duration timeLeft) {
        ObjectNode request = Json.object();
        ArrayNode array = request.putArray("items");
        items.forEach(array::add);
        Answer answer = post(handler.endpoint("process-batch"), handler, request, String.join(",", itemIds), timeLeft);
        Map<String, Outcome> outcomes = new HashMap<>();
        if (!(answer.outcome() instanceof Outcome.Succeeded) || answer.status() != 200) {
            Outcome shared = answer.outcome() instanceof Outcome.Succeeded
                    ? new Outcome.Failed("process-batch answered " + answer.status() + ", not 200", true)
                    : answer.outcome();
            itemIds.forEach(id -> outcomes.put(id, shared));
            return outcomes;
        }
        try {
            JsonNode results = Json.requireObject(Json.parse(answer.body()), "process-batch answer").get("results");
            if (results == null || !results.isArray()) {
                throw new Json.InvalidJsonException("results must be an array");
            }
            for (JsonNode result : results) {
                String itemId = result.path("itemId").asText(null);
                if (itemId == null || !itemIds.contains(itemId)) {
                    continue;
                }
                if (result.path("ok").asBoolean(false)) {
                    outcomes.put(itemId, new Outcome.Succeeded());
                } else {
                    String error = result.path("error").asText("handler reported failure");
                    outcomes.put(itemId, new Outcome.Failed(error, result.path("retryable").asBoolean(true)));
                }
            }
        } catch (Json.InvalidJsonException e) {
            Outcome bad = new Outcome.Failed("process-batch answer unreadable: " + e.getMessage(), true);
            itemIds.forEach(id -> outcomes.putIfAbsent(id, bad));
        }
        for (String itemId : itemIds) {
            outcomes.putIfAbsent(itemId, new Outcome.Failed("process-batch answer has no result for this item", true));
        }
        return outcomes;
    }

    private record Answer(int status, String body, Outcome outcome) {}

    /** @param timeLeft the caller's own deadline: the call times out at the earlier of it and the handler's timeout_ms */
    private Answer post(URI uri, HandlerSpec handler, ObjectNode payload, String idempotencyKey, Duration timeLeft) {
        byte[] body = Json.writeBytes(payload);
        long timestamp = clock.instant().getEpochSecond();
        Duration timeout = Duration.ofMillis(Math.min(handler.configs().timeoutMs(), timeLeft.toMillis()));
        var request = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header(Signature.TIMESTAMP_HEADER, Long.toString(timestamp))
                .header(Signature.SIGNATURE_HEADER, Signature.sign(signingSecret, timestamp, body))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        costs.handlerCall();
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.body(), classify(response));
        } catch (HttpTimeoutException e) {
            return new Answer(0, null, new Outcome.Failed("handler timed out after " + timeout.toMillis() + " ms", true));
        } catch (IOException e) {
            return new Answer(0, null, new Outcome.Failed("handler unreachable: " + e.getClass().getSimpleName() + " " + e.getMessage(), true));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(0, null, new Outcome.Failed("interrupted", true));
        }
    }

    static Outcome classify(HttpResponse<String> response) {
        int status = response.statusCode();
        if (status >= 200 && status < 300) {
            return new Outcome.Succeeded();
        }
        String error = "handler answered " + status + excerpt(response.body());
        if (status == 429) {
            Duration retryAfter = retryAfter(response.headers().firstValue("Retry-After").orElse(null));
            if (retryAfter != null) {
                return new Outcome.Deferred(retryAfter, error);
            }
            return new Outcome.Failed(error, true);
        }
        boolean retryable = status >= 500 || status == 408 || status == 425 || status < 400;
        return new Outcome.Failed(error, retryable);
    }

    /** Retry-After in seconds (the HTTP-date form is rare from APIs and treated as absent). */
    static Duration retryAfter(String header) {
        if (header == null) {
            return null;
        }
        try {
            long seconds = Long.parseLong(header.trim());
            return seconds < 0 ? null : Duration.ofSeconds(seconds);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static String excerpt(String body) {
        if (body == null || body.isBlank()) {
            return "";
        }
        String flat = body.replaceAll("\\s+", " ").strip();
        return ": " + (flat.length() > 300 ? flat.substring(0, 300) + "…" : flat);
    }
}
