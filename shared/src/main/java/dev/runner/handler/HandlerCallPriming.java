package dev.runner.handler;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One {@code /process-batch} exchange through the handler calls' HTTP client ({@link HandlerTransport}),
 * made before a SnapStart checkpoint: to a loopback server started for it (port 0), its answer read
 * and parsed, every connection closed after. The call is screened as allowed to that loopback
 * address alone, whatever the URL policy says: it reaches no handler and touches no real data.
 * Unsigned: signing would set up the message ids' random generator, which must be seeded after a
 * restore, not shared by every environment restored from the snapshot. On a virtual thread, as the
 * calls run ({@code pipeline.Lanes}): the virtual threads' scheduler and the JDK's poller for their
 * blocking sockets then start before the checkpoint rather than in a restored first call.
 */
final class HandlerCallPriming {

    private static final String ITEM = "priming";
    private static final byte[] ANSWER = ("{\"results\":[{\"itemId\":\"" + ITEM + "\",\"ok\":true}]}").getBytes(StandardCharsets.UTF_8);
    private static final Duration DEADLINE = Duration.ofSeconds(5);

    private HandlerCallPriming() {}

    static void prime(HandlerTransport http) {
        RuntimeException[] failed = new RuntimeException[1];
        Thread call = Thread.ofVirtual().name("runner-prime-call").start(() -> {
            try {
                exchange(http);
            } catch (RuntimeException e) {
                failed[0] = e;
            }
        });
        try {
            call.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while priming the handler calls", e);
        }
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    private static void exchange(HandlerTransport http) {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(loopback, 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the loopback server for priming", e);
        }
        server.createContext("/", exchange -> {
            try (exchange; OutputStream out = exchange.getResponseBody()) {
                exchange.getRequestBody().readAllBytes();
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, ANSWER.length);
                out.write(ANSWER);
            }
        });
        server.start();
        try {
            URI url = URI.create("http://" + loopback.getHostAddress() + ":" + server.getAddress().getPort() + "/process-batch");
            ObjectNode request = Json.object();
            request.putArray("items").addObject().put("itemId", ITEM);
            HandlerAnswers.Reply reply = http.post(new HandlerTransport.Target(url, List.of(loopback)),
                    () -> Map.of("Content-Type", "application/json", "Idempotency-Key", ITEM), Json.writeBytes(request), true,
                    status -> HandlerAnswers.RESULT_LIMIT, DEADLINE, new HandlerTransport.Call());
            Outcome outcome = HandlerAnswers.batch(reply, List.of(ITEM), Instant.now()).get(ITEM);
            if (!(outcome instanceof Outcome.Succeeded)) {
                throw new IllegalStateException("the priming call to loopback failed: " + outcome);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("the priming call to loopback failed", e);
        } finally {
            server.stop(0);
            http.closeIdle();
        }
    }
}
