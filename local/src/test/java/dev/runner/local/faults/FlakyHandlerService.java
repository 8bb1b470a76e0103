package dev.runner.local.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A handler service speaking the handler contract (docs/handler-contract.md) that misbehaves on demand, per
 * integration: it <em>flaps</em> (a share of item calls, or every call in an outage window, answers
 * 503) and <em>hangs</em> (a share of item calls, or every call in a hang window, stalls longer than
 * Runner waits, then does the work anyway, as a slow real service would). It keeps a ledger by
 * Idempotency-Key of what it was asked and what it answered, so the fault run can tell what Runner
 * recorded from what the handler saw.
 *
 * <p>Served at {@code /{integrationKey}/fetch|process|process-batch}. Fetch answers
 * {@code settings.pages} pages of {@code settings.pageSize} items {@code p<page>-i<index>}; an item
 * whose payload says {@code reject: true} fails permanently, every other item succeeds unless its
 * call flapped.
 */
public final class FlakyHandlerService implements AutoCloseable {

    /** How one integration's handler misbehaves now; changed while Runner calls it. */
    public static final class Behaviour {
        private volatile double flapShare;
        private volatile double hangShare;
        private final Window outage = new Window();
        private final Window hang = new Window();

        /**
         * Answers 503 to this share (0..1) of item calls, at random. Fetches are spared: a failed fetch
         * waits out its queue's visibility timeout, which would make the run long without showing more.
         */
        public Behaviour flapping(double share) {
            this.flapShare = share(share);
            return this;
        }

        /** Stalls this share (0..1) of item calls, at random, for the service's hang time; fetches are spared, as above. */
        public Behaviour hanging(double share) {
            this.hangShare = share(share);
            return this;
        }

        /** Every call answers 503 for {@code window} from now, and until {@code calls} calls met it (see {@link Window}). */
        public void outageFor(Duration window, int calls) {
            outage.open(window, calls);
        }

        /** Every call stalls for the service's hang time for {@code window} from now, and until {@code calls} calls met it. */
        public void hangFor(Duration window, int calls) {
            hang.open(window, calls);
        }

        private static double share(double share) {
            if (share < 0 || share > 1) {
                throw new IllegalArgumentException("share out of 0..1: " + share);
            }
            return share;
        }
    }

    /**
     * A time during which every call misbehaves. It lasts its duration and, past it, until it has met
     * its number of calls (at most {@link #LONGEST_WINDOW}): on a slow machine the work it is meant to
     * meet may arrive late, and a window that met no call injected nothing.
     */
    private static final class Window {
        private volatile long untilNanos;
        private volatile long capNanos;
        private final AtomicInteger callsToMeet = new AtomicInteger();

        void open(Duration window, int calls) {
            long now = System.nanoTime();
            callsToMeet.set(calls);
            capNanos = now + LONGEST_WINDOW.toNanos();
            untilNanos = now + window.toNanos();
        }

        /** Whether a call arriving now meets the window; counted as met when it does. */
        boolean meets() {
            long now = System.nanoTime();
            if (now >= capNanos || (now >= untilNanos && callsToMeet.get() <= 0)) {
                return false;
            }
            callsToMeet.decrementAndGet();
            return true;
        }
    }

    private static final Duration LONGEST_WINDOW = Duration.ofSeconds(30);

    /** What the handler saw of one item: calls that carried it, and answers that said it succeeded. */
    public record Seen(int calls, int succeeded) {}

    /** Calls by what the handler did with them. */
    public record Tally(long calls, long flapped, long inOutage, long hung) {}

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Duration hangTime;
    private final Map<String, Behaviour> behaviours = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger[]> ledger = new ConcurrentHashMap<>();
    private final LongAdder calls = new LongAdder();
    private final LongAdder flapped = new LongAdder();
    private final LongAdder inOutage = new LongAdder();
    private final LongAdder hung = new LongAdder();

    private FlakyHandlerService(HttpServer server, Duration hangTime) {
        this.server = server;
        this.hangTime = hangTime;
    }

    /** @param hangTime how long a hanging call stalls: more than the handler's timeout_ms, so Runner gives up first */
    public static FlakyHandlerService start(Duration hangTime) {
        try {
            var server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
            var service = new FlakyHandlerService(server, hangTime);
            server.setExecutor(service.executor);
            server.createContext("/", service::serve);
            server.start();
            return service;
        } catch (IOException e) {
            throw new IllegalStateException("flaky handler service did not start: " + e.getMessage(), e);
        }
    }

    /** The handler URL of an integration; the contract's paths hang below it. */
    public String url(String integrationKey) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + integrationKey;
    }

    /** The behaviour of an integration's handler, well-behaved until told otherwise. */
    public Behaviour behaviour(String integrationKey) {
        return behaviours.computeIfAbsent(integrationKey, k -> new Behaviour());
    }

    /** What the handler saw of each item, by Idempotency-Key (the item id). */
    public Map<String, Seen> ledger() {
        Map<String, Seen> seen = new java.util.HashMap<>();
        ledger.forEach((key, counts) -> seen.put(key, new Seen(counts[0].get(), counts[1].get())));
        return seen;
    }

    public Tally tally() {
        return new Tally(calls.sum(), flapped.sum(), inOutage.sum(), hung.sum());
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }

    private void serve(HttpExchange exchange) {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            JsonNode request = Json.parse(exchange.getRequestBody().readAllBytes());
            String integrationKey = path.substring(1, Math.max(1, path.indexOf('/', 1)));
            calls.increment();
            Behaviour behaviour = behaviour(integrationKey);
            boolean process = !path.endsWith("/fetch");
            if (stalls(behaviour, process)) {
                hung.increment();
                stall();
            }
            if (behaviour.outage.meets()) {
                inOutage.increment();
                answer(exchange, 503, Json.object().put("error", "outage"));
                return;
            }
            if (process && ThreadLocalRandom.current().nextDouble() < behaviour.flapShare) {
                flapped.increment();
                answer(exchange, 503, Json.object().put("error", "flap"));
                return;
            }
            if (!process) {
                answer(exchange, 200, fetch(request.path("settings"), request.get("cursor")));
            } else if (path.endsWith("/process-batch")) {
                answer(exchange, 200, processBatch(request.path("items")));
            } else {
                JsonNode item = request.path("item");
                boolean ok = handle(item);
                answer(exchange, ok ? 200 : 422, ok ? Json.object().put("ok", true) : Json.object().put("error", "rejected"));
            }
        } catch (IOException | RuntimeException e) {
            // The caller gave up (a hung call it timed out) or sent garbage: nothing more to answer.
        }
    }

    /** Windows stall every call; the random share only item calls (see {@link Behaviour#hanging}). */
    private boolean stalls(Behaviour behaviour, boolean process) {
        return behaviour.hang.meets() || (process && ThreadLocalRandom.current().nextDouble() < behaviour.hangShare);
    }

    /** The hang itself: the handler is slow, which is the fault being injected. */
    private void stall() {
        try {
            Thread.sleep(hangTime);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Does an item's work; true when it succeeded. Counted whether or not Runner still listens. */
    private boolean handle(JsonNode item) {
        boolean ok = !item.path("payload").path("reject").asBoolean(false);
        AtomicInteger[] counts = ledger.computeIfAbsent(item.path("itemId").asText(), k -> new AtomicInteger[] {new AtomicInteger(), new AtomicInteger()});
        counts[0].incrementAndGet();
        if (ok) {
            counts[1].incrementAndGet();
        }
        return ok;
    }

    private JsonNode processBatch(JsonNode items) {
        ArrayNode results = Json.array();
        for (JsonNode item : items) {
            boolean ok = handle(item);
            ObjectNode result = Json.object().put("itemId", item.path("itemId").asText()).put("ok", ok);
            if (!ok) {
                result.put("error", "rejected").put("retryable", false);
            }
            results.add(result);
        }
        ObjectNode answer = Json.object();
        answer.set("results", results);
        return answer;
    }

    private static JsonNode fetch(JsonNode settings, JsonNode cursor) {
        int pages = settings.path("pages").asInt(1);
        int pageSize = settings.path("pageSize").asInt(10);
        int page = cursor == null || cursor.isNull() ? 0 : Integer.parseInt(cursor.asText());
        ArrayNode items = Json.array();
        for (int i = 0; i < pageSize; i++) {
            items.add(Json.object().put("externalId", externalId(page, i)).set("payload", Json.object().put("page", page).put("index", i)));
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

    /** The externalId fetch gives the {@code index}th item of page {@code page}. */
    public static String externalId(int page, int index) {
        return "p" + page + "-i" + index;
    }

    private static void answer(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }
}
