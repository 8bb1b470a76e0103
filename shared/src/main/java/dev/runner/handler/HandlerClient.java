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

import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.core5.http.MalformedChunkCodingException;
import org.apache.hc.core5.http.MessageConstraintException;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
 * are called, at the addresses it accepted ({@link HandlerTransport}, Apache HttpClient 5, connects to no other).
 */
public final class HandlerClient implements AutoCloseable {

    private static final Log LOG = Log.of(HandlerClient.class);
    private static final int EXCEPTION_CHARS = 200;

    private final HandlerTransport http;
    /** A virtual thread per call: its URL check and name lookup, which have no timeout of their own, then its exchange. */
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

    /** Trusts the certificates the JVM trusts (its default TLS context): the handlers' public CAs. */
    public HandlerClient(SigningSecrets signing, HandlerUrlPolicy urls, Clock clock, CostTracker costs, Metrics metrics) {
        this(signing, urls, clock, costs, metrics, defaultTls());
    }

    HandlerClient(SigningSecrets signing, HandlerUrlPolicy urls, Clock clock, CostTracker costs, Metrics metrics, SSLContext tls) {
        this(signing, urls, clock, costs, metrics, new HandlerTransport(tls));
    }

    HandlerClient(SigningSecrets signing, HandlerUrlPolicy urls, Clock clock, CostTracker costs, Metrics metrics, HandlerTransport http) {
        this.http = http;
        this.signing = signing;
        this.urls = urls;
        this.clock = clock;
        this.costs = costs;
        this.metrics = metrics;
    }

    /** The JVM's default TLS context: what a handler client trusts unless a test gives it another. */
    static SSLContext defaultTls() {
        try {
            return SSLContext.getDefault();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no default TLS context: handlers cannot be called over https", e);
        }
    }

    /** Closes the idle kept-alive connections to handlers (before a SnapStart checkpoint); later calls connect again. */
    public void disconnect() {
        http.closeIdle();
    }

    /**
     * Runs a call's HTTP path once (the client, reading and parsing the answer) against a loopback
     * server of its own, so that a SnapStart snapshot holds it loaded and warm; reaches no handler,
     * reads no key, and leaves no connection open ({@link HandlerCallPriming}).
     */
    public void prime() {
        HandlerCallPriming.prime(http);
    }

    @Override
    public void close() {
        http.close();
        executor.shutdown();
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
                    case Outcome.Pending pending -> throw new IllegalStateException("a fetch answer is never pending");
                    case Outcome.Succeeded succeeded -> {
                        return HandlerAnswers.page(replied.reply());
                    }
                }
            }
        }
    }

    /** {@code /process} for one item; only the status of the answer counts (202: pending, {@link HandlerAnswers#processOutcome}). */
    public Outcome process(String integrationKey, HandlerSpec handler, ObjectNode item, String itemId, Duration timeLeft) {
        ObjectNode request = Json.object();
        request.set("item", item);
        return switch (post(integrationKey, handler, "process", request, itemId, timeLeft, HandlerAnswers.EXCERPT_LIMIT)) {
            case NoReply none -> none.failure();
            case Replied replied -> HandlerAnswers.processOutcome(replied.reply(), clock.instant());
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
                case Outcome.Pending pending -> false;
                case Outcome.Failed failure -> true;
            };
        };
    }

    /**
     * One signed POST, ended by its deadline whatever the handler does. The call runs on a virtual
     * thread of its own, the URL checked first (a name lookup has no timeout of its own), then the
     * exchange on a connection to an address that check accepted; on the deadline the caller stops
     * waiting and closes the connection under whatever the call is blocked in.
     *
     * @param resultLimit what is read of a 2xx body; other bodies are read up to an excerpt
     */
    private Exchange exchange(HandlerRef ref, HandlerSpec handler, String operation, ObjectNode payload, String idempotencyKey,
                              Duration timeLeft, int resultLimit) {
        long deadlineMs = Math.max(1, Math.min(handler.configs().timeoutMs(), timeLeft.toMillis()));
        costs.handlerCall();
        HandlerTransport.Call call = new HandlerTransport.Call();
        Future<Exchange> exchange = null;
        try {
            List<String> secrets = signing.of(ref);
            if (secrets.isEmpty()) {
                // Permanent, as a refused URL: retrying will not give the handler a key; an operator must.
                return new NoReply(new Outcome.Failed("handler " + ref + " has no signing key: create one with POST /handlers/"
                        + ref.integrationKey() + "/" + ref.handlerKey() + "/signing-keys", false));
            }
            URI uri = handler.endpoint(operation);
            byte[] body = Json.writeBytes(payload);
            exchange = executor.submit(() -> call(uri, secrets, body, idempotencyKey, resultLimit, call, deadlineMs));
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
        } finally {
            if (exchange != null && !exchange.isDone()) {
                exchange.cancel(true);
            }
        }
    }

    /** The URL's check, then the exchange with an address it accepted; every way it can end without an answer, classified. */
    private Exchange call(URI uri, List<String> secrets, byte[] body, String idempotencyKey, int resultLimit, HandlerTransport.Call call,
                          long deadlineMs) {
        List<InetAddress> addresses;
        switch (urls.verdict(uri)) {
            case HandlerUrlPolicy.Verdict.Accepted accepted -> addresses = accepted.addresses();
            case HandlerUrlPolicy.Verdict.Refused refused -> {
                return refused(refused.reason());
            }
            case HandlerUrlPolicy.Verdict.Unresolvable unresolvable -> {
                return new NoReply(new Outcome.Failed(unresolvable.reason(), true));
            }
        }
        // Percent-encoded as a request line must be: a type's URL may hold characters outside ASCII.
        HandlerTransport.Target target = new HandlerTransport.Target(URI.create(uri.toASCIIString()), addresses);
        try {
            return new Replied(http.post(target, () -> headers(secrets, body, idempotencyKey), body, idempotencyKey != null,
                    status -> status >= 200 && status < 300 ? resultLimit : status >= 300 && status < 400 ? 0 : HandlerAnswers.EXCERPT_LIMIT,
                    Duration.ofMillis(deadlineMs), call));
        } catch (IOException e) {
            return new NoReply(failure(e, deadlineMs));
        }
    }

    /**
     * A call signed as a Standard Webhooks message, one signature per secret (two during a rotation). Each call has an
     * id of its own, so a handler that remembers the ids it took within the tolerance refuses a captured call sent
     * again; the item's identity across attempts is the Idempotency-Key.
     */
    private Map<String, String> headers(List<String> secrets, byte[] body, String idempotencyKey) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/json");
        headers.put("User-Agent", "runner");
        headers.putAll(StandardWebhooks.headers(secrets, "msg_" + Ids.next(clock), clock.instant().getEpochSecond(), body));
        if (idempotencyKey != null) {
            headers.put("Idempotency-Key", idempotencyKey);
        }
        return headers;
    }

    /** Permanent: the URL will not become callable by retrying; an operator must change the type or the allowed networks. */
    private static NoReply refused(String reason) {
        return new NoReply(new Outcome.Failed("handler URL refused: " + reason, false));
    }

    /** A call that ended without an answer, classified: all retryable but a connection to a refused address. */
    private static Outcome.Failed failure(IOException cause, long deadlineMs) {
        return switch (cause) {
            case ConnectTimeoutException timeout -> new Outcome.Failed("handler did not accept a connection within "
                    + HandlerTransport.CONNECT_TIMEOUT.toSeconds() + " s", true);
            case SocketTimeoutException timeout -> timedOut(deadlineMs);
            // Its deadline closed the connection: the caller has already returned a timeout.
            case InterruptedIOException abandoned -> new Outcome.Failed("handler call abandoned", true);
            case ClientProtocolException malformed -> malformed(malformed.getCause() != null ? malformed.getCause() : malformed);
            case MalformedChunkCodingException malformed -> malformed(malformed);
            case MessageConstraintException malformed -> malformed(malformed);
            default -> new Outcome.Failed("handler unreachable: " + describe(cause), true);
        };
    }

    /** An answer that is not HTTP/1.1, or beyond the client's limits (a head line over 8 KiB, over 100 header fields). */
    private static Outcome.Failed malformed(Throwable cause) {
        return new Outcome.Failed("handler answered malformed HTTP: " + describe(cause), true);
    }

    private static Outcome.Failed timedOut(long deadlineMs) {
        return new Outcome.Failed("handler timed out after " + deadlineMs + " ms", true, true);
    }

    /** An exception as one short line: its messages may quote what the handler sent. */
    private static String describe(Throwable error) {
        String message = error.getMessage();
        return error.getClass().getSimpleName() + (message == null ? "" : " " + HandlerAnswers.clean(message, EXCEPTION_CHARS));
    }
}
