package dev.runner.local.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A handler service speaking Runner's handler contract (docs/handler-contract.md), in-process, for the demo
 * and the end-to-end tests. Its behaviour is driven by data, so a tenant's settings or an item's
 * payload choose it:
 * <ul>
 *   <li>{@code /fetch}: {@code settings.pages} pages (default 3) of {@code settings.pageSize} items
 *       (default 5); {@code settings.fail} / {@code settings.reject} / {@code settings.delayMs} are
 *       copied into every item's payload.</li>
 *   <li>{@code /process} and {@code /process-batch}: an item whose payload has {@code fail: true}
 *       fails retryably (500 / {@code retryable: true}), {@code reject: true} fails permanently
 *       (422 / {@code retryable: false}); {@code delayMs} makes the call take that long;
 *       {@code pendingMs} answers it pending (202 / {@code status: "pending"}) and calls the item's
 *       {@code callbackUrl} with {@code {"ok": true}} that long after (docs/handler-contract.md, callbacks).</li>
 * </ul>
 */
public final class DemoHandlerService implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final AtomicLong itemCalls = new AtomicLong();
    /** Items called per integration key (the first segment of the handler URL's path). */
    private final Map<String, AtomicLong> itemCallsByIntegration = new ConcurrentHashMap<>();
    /** Calls back the items it answered pending (the JDK's client: the demo is a stand-in for a partner's service). */
    private final HttpClient callbacks = HttpClient.newBuilder().executor(executor).connectTimeout(Duration.ofSeconds(5)).build();

    private DemoHandlerService(HttpServer server) {
        this.server = server;
    }

    /** Starts on a free port of 127.0.0.1. */
    public static DemoHandlerService start() {
        try {
            var server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
            var service = new DemoHandlerService(server);
            server.setExecutor(service.executor);
            server.createContext("/", service::handle);
            server.start();
            return service;
        } catch (IOException e) {
            throw new IllegalStateException("demo handler service did not start: " + e.getMessage(), e);
        }
    }

    /** The handler URL to register for an integration's handler; the contract paths hang below it. */
    public String url(String integrationKey, String handlerKey) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + integrationKey + "/" + handlerKey;
    }

    /** How many items reached /process or /process-batch, repeats included. */
    public long itemCalls() {
        return itemCalls.get();
    }

    /** How many items of one integration reached /process or /process-batch, repeats included. */
    public long itemCalls(String integrationKey) {
        AtomicLong calls = itemCallsByIntegration.get(integrationKey);
        return calls == null ? 0 : calls.get();
    }

    private void countItemCall(String path) {
        itemCalls.incrementAndGet();
        String integrationKey = path.substring(1, Math.max(1, path.indexOf('/', 1)));
        itemCallsByIntegration.computeIfAbsent(integrationKey, key -> new AtomicLong()).incrementAndGet();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            int status;
            JsonNode answer;
            try {
                JsonNode request = Json.parse(exchange.getRequestBody().readAllBytes());
                if (!exchange.getRequestMethod().equals("POST")) {
                    status = 405;
                    answer = error("POST only");
                } else if (path.endsWith("/fetch")) {
                    status = 200;
                    answer = fetch(request);
                } else if (path.endsWith("/process-batch")) {
                    status = 200;
                    answer = processBatch(request, path);
                } else if (path.endsWith("/process")) {
                    JsonNode payload = request.path("item").path("payload");
                    countItemCall(path);
                    delay(payload.path("delayMs").asLong(0));
                    status = payload.path("fail").asBoolean(false) ? 500 : payload.path("reject").asBoolean(false) ? 422 : 200;
                    answer = status == 200 ? Json.object().put("ok", true) : error("demo item configured to fail");
                    if (status == 200 && callBackLater(request.path("item"))) {
                        status = 202;
                        answer = Json.object().put("pending", true);
                    }
                } else {
                    status = 404;
                    answer = error("unknown handler path " + path);
                }
            } catch (IllegalArgumentException e) {
                status = 400;
                answer = error(e.getMessage());
            }
            byte[] body = Json.write(answer).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
        } catch (IOException e) {
            // The caller gave up (timeout); nothing to answer.
        }
    }

    private static JsonNode fetch(JsonNode request) {
        JsonNode settings = request.path("settings");
        int pages = settings.path("pages").asInt(3);
        int pageSize = settings.path("pageSize").asInt(5);
        JsonNode cursor = request.get("cursor");
        int page = cursor == null || cursor.isNull() ? 0 : Integer.parseInt(cursor.asText());
        ArrayNode items = Json.array();
        for (int i = 0; i < pageSize; i++) {
            ObjectNode payload = Json.object().put("page", page).put("index", i);
            for (String copied : new String[] {"fail", "reject", "delayMs", "pendingMs"}) {
                if (settings.has(copied)) {
                    payload.set(copied, settings.get(copied));
                }
            }
            items.add(Json.object().put("externalId", "p" + page + "-i" + i).set("payload", payload));
        }
        ObjectNode answer = Json.object();
        answer.set("items", items);
        if (page + 1 < pages) {
            answer.put("nextCursor", Integer.toString(page + 1));
        } else {
            answer.putNull("nextCursor");
        }
        return answer;
    }

    private JsonNode processBatch(JsonNode request, String path) {
        ArrayNode results = Json.array();
        long delay = 0;
        for (JsonNode item : request.path("items")) {
            JsonNode payload = item.path("payload");
            countItemCall(path);
            delay = Math.max(delay, payload.path("delayMs").asLong(0));
            boolean fail = payload.path("fail").asBoolean(false);
            boolean reject = payload.path("reject").asBoolean(false);
            if (!fail && !reject && callBackLater(item)) {
                results.add(Json.object().put("itemId", item.path("itemId").asText()).put("status", "pending"));
                continue;
            }
            ObjectNode result = Json.object().put("itemId", item.path("itemId").asText()).put("ok", !fail && !reject);
            if (fail || reject) {
                result.put("error", "demo item configured to fail").put("retryable", fail);
            }
            results.add(result);
        }
        delay(delay);
        ObjectNode answer = Json.object();
        answer.set("results", results);
        return answer;
    }

    /** An item whose payload asks for {@code pendingMs}: its callback is posted that long from now; false for any other. */
    private boolean callBackLater(JsonNode item) {
        long pendingMs = item.path("payload").path("pendingMs").asLong(0);
        String url = item.path("callbackUrl").asText("");
        if (pendingMs <= 0 || url.isEmpty()) {
            return false;
        }
        executor.submit(() -> {
            delay(pendingMs);
            try {
                callbacks.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"ok\":true}")).build(),
                        HttpResponse.BodyHandlers.discarding());
            } catch (IOException e) {
                // A lost callback: Runner times the attempt out and calls again.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return true;
    }

    private static ObjectNode error(String message) {
        return Json.object().put("error", message);
    }

    private static void delay(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
