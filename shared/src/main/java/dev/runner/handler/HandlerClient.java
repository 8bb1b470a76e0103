package dev.runner.handler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostTracker;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.security.StandardWebhooks;
import dev.runner.store.Ids;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runner's side of the handler contract (docs/handler-contract.md): {@code /fetch}, {@code /process} and
 * {@code /process-batch} over HTTP POST, every call signed with Standard Webhooks by the handler's own
 * keys ({@link SigningSecrets}: one handler's operator cannot sign calls another would take for
 * Runner's), every item call carrying
 * {@code Idempotency-Key}. Whatever a handler does, a call ends by its deadline (the earlier of
 * the handler's {@code timeout_ms} and the caller's time left, body included) with a classified
 * result ({@link HandlerAnswers}); nothing a handler answers throws out of here. Bodies are read
 * up to a limit, redirects are not followed, and only URLs the {@link HandlerUrlPolicy} accepts
 * are called, their addresses screened again as they are connected to ({@link HandlerAddressFilter}).
 */
public final class HandlerClient {

    private static final Log LOG = Log.of(HandlerClient.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final int EXCEPTION_CHARS = 200;

    private final HttpClient http;
    /** Virtual threads for the URL checks and their name lookups, which cannot be given a timeout of their own. */
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final SigningSecrets signing;
    private final HandlerUrlPolicy urls;
    private final Clock clock;
    private final CostTracker costs;
    private final Metrics metrics;

    /** Signs every handler's calls with one key: tests of the calls themselves. */
    public HandlerClient(String signingSecret, HandlerUrlPolicy urls, Clock clock, CostTracker costs) {
        this(SigningSecrets.fixed(signingSecret), urls, clock, costs, Metrics.NONE);
    }

    public HandlerClient(SigningSecrets signing, HandlerUrlPolicy urls, Clock clock, CostTracker costs, Metrics metrics) {
        HandlerAddressFilter.requireInstalled();
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                // The client's own steps (send the request, parse the head, hand the body over) run where
                // they are triggered: on the calling thread, then on the client's selector thread. None of
                // them blocks (bodies go to a CappedBody, which only copies), and each step handed to an
                // executor instead cost a thread hop; those hops were most of a handler call's CPU.
                .executor(Runnable::run)
                .build();
        this.signing = signing;
        this.urls = urls;
        this.clock = clock;
        this.costs = costs;
        this.metrics = metrics;
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

    /**
     * {@code /fetch}: one page, or the classified failure. An unusable page (unreadable, over
     * 1 MiB, ids Runner cannot store) is a permanent failure: the same cursor would bring it again.
     */
    public Page fetch(String integrationKey, HandlerSpec handler, ObjectNode request, Duration timeLeft) throws HandlerCallException {
        switch (post(integrationKey, handler, "fetch", request, null, timeLeft, HandlerAnswers.RESULT_LIMIT)) {
            case NoReply none -> throw new HandlerCallException(none.failure());
            case Replied replied -> {
                switch (HandlerAnswers.outcome(replied.reply(), clock.instant())) {
                    case Outcome.Failed failed -> throw new HandlerCallException(failed);
                    case Outcome.Deferred deferred ->
                            throw new HandlerCallException(new Outcome.Failed("fetch deferred: " + deferred.reason(), true));
                    case Outcome.Succeeded succeeded -> {
                        return HandlerAnswers.page(replied.reply());
                    }
                }
            }
        }
    }

    /** {@code /process} for one item; only the status of the answer counts. */
    public Outcome process(String integrationKey, HandlerSpec handler, ObjectNode item, String itemId, Duration timeLeft) {
        ObjectNode request = Json.object();
        request.set("item", item);
        return switch (post(integrationKey, handler, "process", request, itemId, timeLeft, HandlerAnswers.EXCERPT_LIMIT)) {
            case NoReply none -> none.failure();
            case Replied replied -> HandlerAnswers.outcome(replied.reply(), clock.instant());
        };
    }

    /** {@code /process-batch}: an outcome for every itemId asked ({@link HandlerAnswers#batch}). */
    public Map<String, Outcome> processBatch(String integrationKey, HandlerSpec handler, List<ObjectNode> items, List<String> itemIds,
                                             Duration timeLeft) {
        ObjectNode request = Json.object();
        ArrayNode array = request.putArray("items");
        items.forEach(array::add);
        return switch (post(integrationKey, handler, "process-batch", request, String.join(",", itemIds), timeLeft, HandlerAnswers.RESULT_LIMIT)) {
            case NoReply none -> {
                Map<String, Outcome> outcomes = new LinkedHashMap<>();
                itemIds.forEach(id -> outcomes.put(id, none.failure()));
                yield outcomes;
            }
            case Replied replied -> HandlerAnswers.batch(replied.reply(), itemIds, clock.instant());
        };
    }

    /** How a call ended: with an answer to classify, or without one. */
    private sealed interface Exchange {}

    private record Replied(HandlerAnswers.Reply reply) implements Exchange {}

    private record NoReply(Outcome.Failed failure) implements Exchange {}

    /** {@link #exchange}, timed and counted: one HandlerLatency value per call, and a HandlerErrors count when it failed. */
    private Exchange post(String integrationKey, HandlerSpec handler, String operation, ObjectNode payload, String idempotencyKey,
                          Duration timeLeft, int resultLimit) {
        long started = System.nanoTime();
        Exchange exchange = exchange(new HandlerRef(integrationKey, handler.handlerKey()), handler, operation, payload, idempotencyKey,
                timeLeft, resultLimit);
        metrics.handlerCall(integrationKey, handler.handlerKey(), Duration.ofNanos(System.nanoTime() - started), failed(exchange));
        return exchange;
    }

    /** No usable answer: none at all, or a status that is neither a success nor a 429 asking for a delay. */
    private boolean failed(Exchange exchange) {
        return switch (exchange) {
            case NoReply none -> true;
            case Replied replied -> switch (HandlerAnswers.outcome(replied.reply(), clock.instant())) {
                case Outcome.Succeeded succeeded -> false;
                case Outcome.Deferred deferred -> false;
                case Outcome.Failed failure -> true;
            };
        };
    }

    /**
     * One signed POST, ended by its deadline whatever the handler does. The URL is checked first
     * (in the deadline too: a name lookup has no timeout of its own); on the deadline the request
     * is cancelled and its body reading stopped, which drops the connection.
     *
     * @param resultLimit what is read of a 2xx body; other bodies are read up to an excerpt
     */
    private Exchange exchange(HandlerRef ref, HandlerSpec handler, String operation, ObjectNode payload, String idempotencyKey,
                              Duration timeLeft, int resultLimit) {
        long deadlineMs = Math.max(1, Math.min(handler.configs().timeoutMs(), timeLeft.toMillis()));
        costs.handlerCall();
        Call call = new Call();
        try {
            List<String> secrets = signing.of(ref);
            if (secrets.isEmpty()) {
                // Permanent, as a refused URL: retrying will not give the handler a key; an operator must.
                return new NoReply(new Outcome.Failed("handler " + ref + " has no signing key: create one with POST /handlers/"
                        + ref.integrationKey() + "/" + ref.handlerKey() + "/signing-keys", false));
            }
            URI uri = handler.endpoint(operation);
            CompletableFuture<Exchange> exchange = CompletableFuture
                    .supplyAsync(() -> admit(uri), executor)
                    .thenCompose(refused -> refused.isPresent()
                            ? CompletableFuture.completedFuture(refused.get())
                            : send(request(uri, secrets, payload, idempotencyKey, Duration.ofMillis(deadlineMs)), resultLimit, call, deadlineMs));
            return exchange.get(deadlineMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            call.abandon();
            return new NoReply(timedOut(deadlineMs));
        } catch (InterruptedException e) {
            call.abandon();
            Thread.currentThread().interrupt();
            return new NoReply(new Outcome.Failed("interrupted while calling the handler", true));
        } catch (ExecutionException | RuntimeException e) {
            // Not an answer of the handler's (those are classified on the way): a fault here, kept retryable.
            call.abandon();
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            LOG.error("handler call failed", "handlerKey", handler.handlerKey(), "operation", operation, "error", cause);
            return new NoReply(new Outcome.Failed("handler call failed: " + describe(cause), true));
        }
    }

    /**
     * A call signed as a Standard Webhooks message, one signature per secret (two during a rotation). Each call has an
     * id of its own, so a handler that remembers the ids it took within the tolerance refuses a captured call sent
     * again; the item's identity across attempts is the Idempotency-Key.
     */
    private HttpRequest request(URI uri, List<String> secrets, ObjectNode payload, String idempotencyKey, Duration deadline) {
        byte[] body = Json.writeBytes(payload);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                // Covers the wait for the headers only; the deadline in post covers the body as well.
                .timeout(deadline)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        StandardWebhooks.headers(secrets, "msg_" + Ids.next(clock), clock.instant().getEpochSecond(), body).forEach(request::header);
        if (idempotencyKey != null) {
            request.header("Idempotency-Key", idempotencyKey);
        }
        return request.build();
    }

    /** Refused or unresolvable URLs end here, without a connection; an accepted host is screened from now on. */
    private Optional<Exchange> admit(URI uri) {
        return switch (urls.verdict(uri)) {
            case HandlerUrlPolicy.Verdict.Accepted accepted -> {
                HandlerAddressFilter.register(uri.getHost(), urls);
                yield Optional.empty();
            }
            case HandlerUrlPolicy.Verdict.Refused refused -> Optional.of(refused(refused.reason()));
            case HandlerUrlPolicy.Verdict.Unresolvable unresolvable -> Optional.of(HandlerAddressFilter.lastRefusal(uri.getHost())
                    .map(HandlerClient::refused)
                    .orElseGet(() -> new NoReply(new Outcome.Failed(unresolvable.reason(), true))));
        };
    }

    /** Permanent: the URL will not become callable by retrying; an operator must change the type or the allowed networks. */
    private static NoReply refused(String reason) {
        return new NoReply(new Outcome.Failed("handler URL refused: " + reason, false));
    }

    private CompletableFuture<Exchange> send(HttpRequest request, int resultLimit, Call call, long deadlineMs) {
        if (call.abandoned()) {
            return CompletableFuture.completedFuture(new NoReply(new Outcome.Failed("handler call abandoned", true)));
        }
        CompletableFuture<HttpResponse<CappedBody.Body>> response = http.sendAsync(request, head -> {
            int status = head.statusCode();
            int limit = status >= 200 && status < 300 ? resultLimit : status >= 300 && status < 400 ? 0 : HandlerAnswers.EXCERPT_LIMIT;
            return call.reading(new CappedBody(limit, head.headers().firstValueAsLong("Content-Length")));
        });
        call.sending(response);
        return response.handle((answer, error) -> error == null
                ? new Replied(new HandlerAnswers.Reply(answer.statusCode(), answer.headers().firstValue("Retry-After").orElse(null),
                        answer.body().bytes(), answer.body().overLimit()))
                : new NoReply(failure(request.uri(), error, deadlineMs)));
    }

    /** A call that ended without an answer, classified: all retryable but a connection to a refused address. */
    private static Outcome.Failed failure(URI uri, Throwable error, long deadlineMs) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof HttpConnectTimeoutException) {
            return new Outcome.Failed("handler did not accept a connection within " + CONNECT_TIMEOUT.toSeconds() + " s", true);
        }
        if (cause instanceof HttpTimeoutException) {
            return timedOut(deadlineMs);
        }
        if (cause instanceof ConnectException) {
            // The address filter refuses by failing the lookup, which the client reports as a failed connect.
            Optional<String> refusal = HandlerAddressFilter.lastRefusal(uri.getHost());
            if (refusal.isPresent()) {
                return refused(refusal.get()).failure();
            }
        }
        if (cause instanceof CancellationException) {
            return new Outcome.Failed("handler call abandoned", true);
        }
        if (cause instanceof IOException) {
            return new Outcome.Failed("handler unreachable: " + describe(cause), true);
        }
        LOG.error("handler call failed", "host", uri.getHost(), "error", cause);
        return new Outcome.Failed("handler call failed: " + describe(cause), true);
    }

    private static Outcome.Failed timedOut(long deadlineMs) {
        return new Outcome.Failed("handler timed out after " + deadlineMs + " ms", true);
    }

    /** An exception as one short line: its messages may quote what the handler sent. */
    private static String describe(Throwable error) {
        String message = error.getMessage();
        return error.getClass().getSimpleName() + (message == null ? "" : " " + HandlerAnswers.clean(message, EXCEPTION_CHARS));
    }

    /**
     * What a call has started, so that its deadline can stop it at any stage: a request not yet
     * sent is never sent, a request in flight is cancelled, a body being read stops being read.
     * Cancelling happens outside the lock: the HTTP client runs its steps inline (on the caller or
     * its selector thread), so a cancel may run client code that must not wait on this monitor.
     */
    private static final class Call {
        private boolean abandoned;
        private CompletableFuture<?> response;
        private CappedBody body;

        synchronized boolean abandoned() {
            return abandoned;
        }

        void sending(CompletableFuture<?> response) {
            boolean cancel;
            synchronized (this) {
                this.response = response;
                cancel = abandoned;
            }
            if (cancel) {
                response.cancel(true);
            }
        }

        CappedBody reading(CappedBody body) {
            boolean abort;
            synchronized (this) {
                this.body = body;
                abort = abandoned;
            }
            if (abort) {
                body.abort();
            }
            return body;
        }

        void abandon() {
            CompletableFuture<?> sent;
            CappedBody read;
            synchronized (this) {
                abandoned = true;
                sent = response;
                read = body;
            }
            if (sent != null) {
                sent.cancel(true);
            }
            if (read != null) {
                read.abort();
            }
        }
    }
}
