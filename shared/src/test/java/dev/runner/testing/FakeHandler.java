package dev.runner.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;
import dev.runner.security.WebhookScheme;
import dev.runner.security.WebhookVerification;
import dev.runner.security.WebhookVerifier;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.function.ToIntFunction;

/**
 * A real HTTP server speaking the handler contract (docs/handler-contract.md), one behaviour per handler key at
 * {@code /h/{handlerKey}}. It records every call with its Idempotency-Key and whether Runner's
 * signature verified, so tests assert on what a real handler service would have seen. It verifies
 * as docs/handler-contract.md tells handlers to: Standard Webhooks, with the handler's own keys
 * ({@link Behaviour#signingSecrets}), else the secret it was started with.
 */
public final class FakeHandler implements AutoCloseable {

    /** An answer: its status and its Retry-After header (null: none). */
    public record Reply(int status, String retryAfter) {
        public static final Reply OK = new Reply(200, null);

        public static Reply status(int status) {
            return new Reply(status, null);
        }
    }

    /** A call as received, with when (System.nanoTime). */
    public record Call(String handlerKey, String operation, String idempotencyKey, boolean signatureValid, JsonNode body,
                       long receivedAtNanos) {}

    /** How a handler answers. Mutable so a test can change it mid-flight (an outage that ends). */
    public static final class Behaviour {
        volatile List<List<ObjectNode>> pages = List.of();
        volatile ToIntFunction<JsonNode> itemStatus = item -> 200;
        /** Null: {@link #itemStatus} answers, with no header. */
        volatile java.util.function.Function<JsonNode, Reply> itemReply;
        /** Null: {@link #batchStatus} answers the call, then each item. */
        volatile java.util.function.Function<JsonNode, Reply> batchReply;
        volatile java.util.function.IntSupplier batchStatus = () -> 200;
        volatile java.util.function.IntSupplier fetchStatus = () -> 200;
        /** Null: the secret the server was started with. */
        volatile List<String> signingSecrets;
        volatile boolean refuseBadSignatures;

        /** Fetch answers {@code pages} pages of {@code perPage} items, externalIds {@code e-<page>-<i>}. */
        public Behaviour pages(int pages, int perPage) {
            List<List<ObjectNode>> all = new ArrayList<>();
            for (int p = 0; p < pages; p++) {
                List<ObjectNode> page = new ArrayList<>();
                for (int i = 0; i < perPage; i++) {
                    ObjectNode item = Json.object().put("externalId", "e-" + p + "-" + i);
                    item.putObject("payload").put("page", p).put("index", i);
                    page.add(item);
                }
                all.add(page);
            }
            this.pages = all;
            return this;
        }

        /** The HTTP status each item's processing answers (200 = success, 202 = pending), by item. */
        public Behaviour itemStatus(ToIntFunction<JsonNode> status) {
            this.itemStatus = status;
            return this;
        }

        /** The answer to each /process call, by item, with its Retry-After (a partner that limits Runner). */
        public Behaviour itemReply(java.util.function.Function<JsonNode, Reply> reply) {
            this.itemReply = reply;
            return this;
        }

        /** The answer to each /process-batch call as a whole, by its request (200 = answer per item), with its Retry-After. */
        public Behaviour batchReply(java.util.function.Function<JsonNode, Reply> reply) {
            this.batchReply = reply;
            return this;
        }

        /** A non-200 answer to every /process-batch call (200 = answer per item). */
        public Behaviour batchStatus(int status) {
            this.batchStatus = () -> status;
            return this;
        }

        /** The status of each /process-batch call, decided per call (an outage that ends). */
        public Behaviour batchStatus(java.util.function.IntSupplier status) {
            this.batchStatus = status;
            return this;
        }

        public Behaviour fetchStatus(int status) {
            this.fetchStatus = () -> status;
            return this;
        }

        /** The status of each fetch call, decided per call (a fetch that fails once). */
        public Behaviour fetchStatus(java.util.function.IntSupplier status) {
            this.fetchStatus = status;
            return this;
        }

        /** The keys this handler verifies Runner's calls with (its own, as an admin gave them to it); any one may match. */
        public Behaviour signingSecrets(String... secrets) {
            this.signingSecrets = List.of(secrets);
            return this;
        }

        /** Answers a call whose signature does not verify 401, as a real handler would, instead of serving it. */
        public Behaviour refuseBadSignatures() {
            this.refuseBadSignatures = true;
            return this;
        }
    }

    private final HttpServer server;
    private final String signingSecret;
    private final Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
    private final List<Call> calls = new CopyOnWriteArrayList<>();

    private FakeHandler(String signingSecret, Executor executor) throws IOException {
        this.signingSecret = signingSecret;
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
        server.setExecutor(executor);
        server.createContext("/h/", this::serve);
        server.start();
    }

    public static FakeHandler start(String signingSecret) {
        return start(signingSecret, Executors.newVirtualThreadPerTaskExecutor());
    }

    /** On threads of the caller's choosing (benchmarks keep the handler off the virtual threads they measure). */
    public static FakeHandler start(String signingSecret, Executor executor) {
        try {
            return new FakeHandler(signingSecret, executor);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The behaviour of a handler key, created on first use. */
    public Behaviour handler(String handlerKey) {
        return behaviours.computeIfAbsent(handlerKey, k -> new Behaviour());
    }

    public String url(String handlerKey) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/h/" + handlerKey;
    }

    public List<Call> calls(String handlerKey) {
        return calls.stream().filter(c -> c.handlerKey().equals(handlerKey)).toList();
    }

    /** Item calls (process and process-batch) of a handler. */
    public List<Call> itemCalls(String handlerKey) {
        return calls(handlerKey).stream().filter(c -> !c.operation().equals("fetch")).toList();
    }

    /** How many times the handler was asked to process one item, by itemId, over all calls. */
    public long timesProcessed(String handlerKey, String itemId) {
        return itemCalls(handlerKey).stream().flatMap(c -> items(c).stream())
                .filter(item -> item.path("itemId").asText().equals(itemId)).count();
    }

    public static List<JsonNode> items(Call call) {
        List<JsonNode> items = new ArrayList<>();
        if (call.operation().equals("process")) {
            items.add(call.body().path("item"));
        } else if (call.operation().equals("process-batch")) {
            call.body().path("items").forEach(items::add);
        }
        return items;
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String[] parts = exchange.getRequestURI().getPath().split("/");
            if (parts.length != 4 || !"POST".equals(exchange.getRequestMethod())) {
                answer(exchange, 404, "{}");
                return;
            }
            String handlerKey = parts[2];
            String operation = parts[3];
            byte[] raw = exchange.getRequestBody().readAllBytes();
            Behaviour behaviour = handler(handlerKey);
            List<String> secrets = behaviour.signingSecrets != null ? behaviour.signingSecrets : List.of(signingSecret);
            boolean signed = WebhookVerifier.verify(WebhookScheme.STANDARD, secrets, exchange.getRequestHeaders()::getFirst, raw,
                    Instant.now(), WebhookVerifier.DEFAULT_TOLERANCE) instanceof WebhookVerification.Verified;
            JsonNode body = Json.parse(raw);
            calls.add(new Call(handlerKey, operation, exchange.getRequestHeaders().getFirst("Idempotency-Key"), signed, body, System.nanoTime()));
            if (!signed && behaviour.refuseBadSignatures) {
                answer(exchange, 401, "{\"error\":\"signature does not verify\"}");
                return;
            }
            switch (operation) {
                case "fetch" -> fetch(exchange, behaviour, body);
                case "process" -> {
                    var custom = behaviour.itemReply;
                    Reply reply = custom != null ? custom.apply(body.path("item")) : Reply.status(behaviour.itemStatus.applyAsInt(body.path("item")));
                    answer(exchange, reply, "{\"status\":" + reply.status() + "}");
                }
                case "process-batch" -> processBatch(exchange, behaviour, body);
                default -> answer(exchange, 404, "{}");
            }
        }
    }

    private static void fetch(HttpExchange exchange, Behaviour behaviour, JsonNode request) throws IOException {
        int status = behaviour.fetchStatus.getAsInt();
        if (status != 200) {
            answer(exchange, status, "{\"error\":\"fetch failing\"}");
            return;
        }
        int page = request.path("cursor").isTextual() ? Integer.parseInt(request.path("cursor").asText()) : 0;
        List<List<ObjectNode>> pages = behaviour.pages;
        ObjectNode answer = Json.object();
        ArrayNode items = answer.putArray("items");
        if (page < pages.size()) {
            pages.get(page).forEach(items::add);
        }
        if (page + 1 < pages.size()) {
            answer.put("nextCursor", Integer.toString(page + 1));
        } else {
            answer.putNull("nextCursor");
        }
        answer(exchange, 200, Json.write(answer));
    }

    private static void processBatch(HttpExchange exchange, Behaviour behaviour, JsonNode request) throws IOException {
        var custom = behaviour.batchReply;
        Reply reply = custom != null ? custom.apply(request) : Reply.status(behaviour.batchStatus.getAsInt());
        if (reply.status() != 200) {
            answer(exchange, reply, "{\"error\":\"batch failing\"}");
            return;
        }
        ObjectNode answer = Json.object();
        ArrayNode results = answer.putArray("results");
        for (JsonNode item : request.path("items")) {
            int itemStatus = behaviour.itemStatus.applyAsInt(item);
            if (itemStatus == 202) {
                // Pending: the handler calls the item's callbackUrl later (docs/handler-contract.md, callbacks).
                results.addObject().put("itemId", item.path("itemId").asText()).put("status", "pending");
                continue;
            }
            ObjectNode result = results.addObject().put("itemId", item.path("itemId").asText()).put("ok", itemStatus < 300);
            if (itemStatus >= 300) {
                result.put("error", "item answered " + itemStatus);
                result.put("retryable", itemStatus >= 500 || itemStatus == 408 || itemStatus == 429);
            }
        }
        answer(exchange, 200, Json.write(answer));
    }

    private static void answer(HttpExchange exchange, Reply reply, String body) throws IOException {
        if (reply.retryAfter() != null) {
            exchange.getResponseHeaders().set("Retry-After", reply.retryAfter());
        }
        answer(exchange, reply.status(), body);
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
