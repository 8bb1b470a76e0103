package dev.runner.handler;

import dev.runner.cost.CostTracker;
import dev.runner.embedded.TlsCertificates;
import dev.runner.integration.Direction;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.metrics.Metrics;
import dev.runner.testing.FakeDns;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handler client's HTTP ({@link HandlerTransport}, Apache HttpClient 5) against a server that
 * answers byte for byte what each test scripts, over real sockets on loopback, plain and TLS:
 * connections kept alive and given up when the handler closes them, a call sent again only when
 * that is safe, answers framed every way HTTP/1.1 allows, and what it must refuse.
 */
class HandlerTransportIT {

    private static final Duration AMPLE = Duration.ofSeconds(5);
    private static final HandlerUrlPolicy LOOPBACK = HandlerUrlPolicy.parse("127.0.0.0/8,::1/128");
    private static final Outcome SUCCEEDED = new Outcome.Succeeded();

    private static TlsCertificates certificates;

    @BeforeAll
    static void makeCertificates() {
        certificates = TlsCertificates.create();
    }

    @AfterAll
    static void deleteCertificates() {
        certificates.close();
    }

    @Test
    void callsOneAfterAnotherShareOneKeptAliveConnection() {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.json(200, "{}"))) {
            HandlerClient client = client();
            for (int i = 0; i < 5; i++) {
                assertEquals(SUCCEEDED, process(client, server, "i-" + i));
            }
            assertEquals(1, server.connections());
            assertEquals(5, server.requests().size());
        }
    }

    @Test
    void aKeptAliveConnectionTheHandlerClosedWhileIdleDoesNotFailTheNextCall() {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.json(200, "{}").thenClose())) {
            HandlerClient client = client();
            assertEquals(SUCCEEDED, process(client, server, "i-1"));
            await().atMost(AMPLE).until(() -> server.closedByServer() == 1);
            assertEquals(SUCCEEDED, process(client, server, "i-2"));
            assertEquals(2, server.connections());
            assertEquals(2, server.requests().size(), "the second call went out once, on a new connection");
        }
    }

    @Test
    void aCallOnAReusedConnectionThatEndsBeforeAnyAnswerIsSentOnceMoreOnANewConnectionSignedAnew() {
        // The second request on the first connection is read and the connection closed without a byte: a close the client had not yet seen.
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> request.connection() == 1 && n == 2 ? Reply.hangUp() : Reply.json(200, "{}"))) {
            HandlerClient client = client();
            assertEquals(SUCCEEDED, process(client, server, "i-1"));
            assertEquals(SUCCEEDED, process(client, server, "i-2"));

            List<Request> requests = server.requests();
            assertEquals(3, requests.size());
            Request dropped = requests.get(1);
            Request again = requests.get(2);
            assertEquals(2, again.connection());
            assertEquals("i-2", dropped.header("idempotency-key"));
            assertEquals("i-2", again.header("idempotency-key"));
            assertNotEquals(dropped.header("webhook-id"), again.header("webhook-id"), "a handler that remembers message ids must not see a replay");
        }
    }

    @Test
    void aCallOnANewConnectionThatEndsBeforeAnyAnswerIsNotSentAgain() {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.hangUp())) {
            Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, process(client(), server, "i-1"));
            assertTrue(failed.retryable() && failed.error().startsWith("handler unreachable"), failed.error());
            assertEquals(1, server.requests().size());
        }
    }

    @Test
    void aCallOnAReusedConnectionThatFailsInsideItsAnswerIsNotSentAgain() {
        byte[] halfAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"re".getBytes(StandardCharsets.ISO_8859_1);
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> n == 2 ? Reply.raw(halfAnswer).thenClose() : Reply.json(200, "{}"))) {
            HandlerClient client = client();
            assertEquals(SUCCEEDED, process(client, server, "i-1"));
            Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, process(client, server, "i-2"));
            assertTrue(failed.retryable(), failed.error());
            assertEquals(2, server.requests().size());
        }
    }

    @Test
    void anItemCallAnswered408OnAReusedConnectionIsSentOnceMoreOnANewConnectionWhichIsNotPooled() {
        // The 408 a server writes as it times out an idle kept-alive connection, landing on the call that crossed it.
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> request.connection() == 1 && n == 2 ? Reply.json(408, "{}") : Reply.json(200, "{}"))) {
            HandlerClient client = client();
            assertEquals(SUCCEEDED, process(client, server, "i-1"));
            assertEquals(SUCCEEDED, process(client, server, "i-2"));

            List<Request> requests = server.requests();
            assertEquals(3, requests.size());
            assertEquals(2, requests.get(2).connection());
            assertEquals("i-2", requests.get(2).header("idempotency-key"));
            await().atMost(AMPLE).until(() -> server.closedByClient() == 1);
            assertEquals(SUCCEEDED, process(client, server, "i-3"));
            assertEquals(2, server.requests().get(3).connection(), "the next call went on the new connection");
            assertEquals(2, server.connections());
        }
    }

    @Test
    void a408OnANewConnectionIsTheCallsOutcomeAndItsConnectionIsNotPooled() {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.json(408, "{}"))) {
            Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, process(client(), server, "i-1"));
            assertTrue(failed.retryable() && failed.error().startsWith("handler answered 408"), failed.error());
            assertEquals(1, server.requests().size());
            await().atMost(AMPLE).until(() -> server.closedByClient() == 1);
        }
    }

    @Test
    void aFetchAnswered408OnAReusedConnectionIsNotSentAgain() {
        assertASecondFetchIsNotSentAgain(Reply.json(408, "{}"), "handler answered 408");
    }

    @Test
    void answersTheClientWouldRetryOrAuthenticateOnItsOwnAreTheOutcomeSentOnce() {
        Map<String, String> answers = Map.of(
                "HTTP/1.1 503 Busy\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n", "handler answered 503",
                "HTTP/1.1 401 Who\r\nWWW-Authenticate: Basic realm=\"h\"\r\nContent-Length: 0\r\n\r\n", "handler answered 401");
        answers.forEach((answer, says) -> {
            try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.raw(answer))) {
                Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, process(client(), server, "i-1"));
                assertTrue(failed.error().startsWith(says), failed.error());
                assertEquals(1, server.requests().size());
            }
        });
    }

    @Test
    void answersFramedByChunksOrByTheConnectionsEndAreReadWhole() {
        String results = "{\"results\":[{\"itemId\":\"i-1\",\"ok\":true},{\"itemId\":\"i-2\",\"ok\":false,\"error\":\"no\"}]}";
        String chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;ext=1\r\n" + results.substring(0, 5) + "\r\n"
                + Integer.toHexString(results.length() - 5) + "\r\n" + results.substring(5) + "\r\n"
                + "0\r\nX-Trailer: t\r\n\r\n";
        String untilClose = "HTTP/1.1 200 OK\nContent-Type: application/json\n\n" + results;
        for (Reply reply : List.of(Reply.raw(chunked), Reply.raw(untilClose).thenClose())) {
            try (ScriptedServer server = ScriptedServer.plain((request, n) -> reply)) {
                Map<String, Outcome> outcomes = batch(client(), server);
                assertEquals(SUCCEEDED, outcomes.get("i-1"));
                assertEquals(new Outcome.Failed("no", true), outcomes.get("i-2"));
            }
        }
    }

    @Test
    void interimAnswersAreSkippedAndASwitchOfProtocolsIsRefused() {
        String early = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n";
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.raw(early + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))) {
            assertEquals(SUCCEEDED, process(client(), server, "i-1"));
        }
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"))) {
            assertMalformed(process(client(), server, "i-1"), "protocol");
        }
    }

    @Test
    void answersBeyondHttpOrItsLimitsAreRetryableFailuresAndDropTheConnection() {
        Map<String, String> answers = new LinkedHashMap<>();
        answers.put("HTTP/1.1 200 OK\r\nX-Flood: " + "a".repeat(70 * 1024) + "\r\nContent-Length: 2\r\n\r\n{}", "line length");
        answers.put("HTTP/1.1 200 OK\r\n" + "X-Many: a\r\n".repeat(101) + "Content-Length: 2\r\n\r\n{}", "header count");
        answers.put("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "Multiple Content-Length");
        answers.put("HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n{}", "Invalid content length");
        answers.put("HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}", "Negative content length");
        answers.put("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "Unsupported transfer encoding");
        answers.put("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "Bad chunk header");
        answers.put("HTTP/1.1 200 OK\r\nTransfer-Encoding\t: chunked\r\nContent-Length: 2\r\n\r\n{}", "Invalid header");
        answers.put("ICY 200 OK\r\n\r\n{}", "Invalid protocol version");
        answers.put("HTTP/1.1 2x0 OK\r\n\r\n", "status");
        answers.forEach((answer, says) -> {
            try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.raw(answer))) {
                assertMalformed(process(client(), server, "i-1"), says);
                await().atMost(AMPLE).until(() -> server.closedByClient() == 1);
            }
        });
    }

    @Test
    void httpsIsCalledWithTheHostsCertificateCheckedAndKeptAlive() {
        try (ScriptedServer server = ScriptedServer.tls(certificates.serverContext(certificates.loopback()), (request, n) -> Reply.json(200, "{}"))) {
            HandlerClient trusting = client(certificates.trustingCa());
            for (int i = 0; i < 3; i++) {
                assertEquals(SUCCEEDED, process(trusting, server, "i-" + i));
            }
            assertEquals(1, server.connections());

            // The JVM's default trust does not know the test CA.
            Outcome.Failed untrusted = assertInstanceOf(Outcome.Failed.class, process(client(), server, "i-9"));
            assertTrue(untrusted.retryable() && untrusted.error().contains("SSLHandshakeException"), untrusted.error());
            assertEquals(3, server.requests().size());
        }
        try (ScriptedServer server = ScriptedServer.tls(certificates.serverContext(certificates.otherHost()), (request, n) -> Reply.json(200, "{}"))) {
            Outcome.Failed otherHost = assertInstanceOf(Outcome.Failed.class, process(client(certificates.trustingCa()), server, "i-1"));
            assertTrue(otherHost.retryable() && otherHost.error().contains("SSLHandshakeException"), otherHost.error());
            assertEquals(0, server.requests().size());
        }
    }

    @Test
    void aCallWithoutAnIdempotencyKeyIsNotSentAgainWhenItsReusedConnectionEnds() {
        assertASecondFetchIsNotSentAgain(Reply.hangUp(), "handler unreachable");
    }

    /** Two fetches on one kept-alive connection, the second met by {@code second}: its failure is the outcome, sent once. */
    private void assertASecondFetchIsNotSentAgain(Reply second, String errorPrefix) {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> n == 2 ? second : Reply.json(200, "{\"items\":[]}"))) {
            HandlerClient client = client();
            assertEquals(0, assertDoesNotThrow(() -> fetch(client, server)).items().size());
            HandlerClient.HandlerCallException failed = assertThrows(HandlerClient.HandlerCallException.class, () -> fetch(client, server));
            assertTrue(failed.failure().retryable() && failed.failure().error().startsWith(errorPrefix), failed.failure().error());
            assertEquals(2, server.requests().size(), "a fetch carries no Idempotency-Key: the handler could not tell a second send");
        }
    }

    @Test
    void idleConnectionsBelowAWarmOneAreClosedWhenTheyAgeOut() {
        int burst = 6;
        CountDownLatch together = new CountDownLatch(burst);
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> {
            together.countDown();
            awaitQuietly(together);
            return Reply.json(200, "{}");
        })) {
            HandlerClient client = client(new HandlerTransport(HandlerClient.defaultTls(), Duration.ofMillis(300)));
            try (ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < burst; i++) {
                    String itemId = "burst-" + i;
                    calls.submit(() -> process(client, server, itemId));
                }
            }
            assertEquals(burst, server.connections());

            // One call at a time keeps the top connection warm; the ones under it age out and are closed by the client.
            await().atMost(AMPLE).pollInterval(Duration.ofMillis(50)).until(() -> {
                assertEquals(SUCCEEDED, process(client, server, "trickle"));
                return server.closedByClient() == burst - 1;
            });
            assertEquals(burst, server.connections(), "the warm connection carried every later call");
        }
    }

    @Test
    void aKeptAliveConnectionIsReusedOnlyForACallWhoseCheckAcceptedItsAddress() {
        String host = "moved-handler.test";
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.json(200, "{}"))) {
            HandlerClient client = client();
            URI url = URI.create("http://" + host + ":" + server.url().getPort() + "/h");
            FakeDns.answer(host, "127.0.0.1");
            assertEquals(SUCCEEDED, process(client, url, "i-1"));
            // The name moves to another allowed address, where nothing listens: the kept-alive connection to the first is not used.
            FakeDns.answer(host, "127.0.0.2");
            Outcome.Failed moved = assertInstanceOf(Outcome.Failed.class, process(client, url, "i-2"));
            assertTrue(moved.retryable() && moved.error().contains("ConnectException"), moved.error());
            assertEquals(1, server.requests().size());
        } finally {
            FakeDns.forget(host);
        }
    }

    @Test
    void aFetchPageSentInSmallChunksIsReadWhole() {
        StringBuilder page = new StringBuilder("{\"items\":[");
        for (int i = 0; i < 3000; i++) {
            page.append(i == 0 ? "" : ",").append("{\"externalId\":\"e-").append(i).append("\"}");
        }
        String json = page.append("]}").toString();
        StringBuilder chunked = new StringBuilder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int at = 0; at < json.length(); at += 8) {
            String chunk = json.substring(at, Math.min(json.length(), at + 8));
            chunked.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk).append("\r\n");
        }
        String answer = chunked.append("0\r\n\r\n").toString();
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.raw(answer))) {
            assertEquals(3000, assertDoesNotThrow(() -> fetch(client(), server)).items().size());
        }
    }

    @Test
    void aUrlWithCharactersOutsideAsciiIsSentPercentEncoded() {
        try (ScriptedServer server = ScriptedServer.plain((request, n) -> Reply.json(200, "{}"))) {
            URI url = URI.create("http://127.0.0.1:" + server.url().getPort() + "/caf\u00e9/\u0100");
            assertEquals(SUCCEEDED, process(client(), url, "i-1"));
            assertEquals("/caf%C3%A9/%C4%80/process", server.requests().getFirst().target());
        }
    }

    @Test
    void anAnswerSentBeforeALargeRequestWasReadIsTheCallsOutcome() throws Exception {
        // A handler that refuses a large request after its head, as a proxy enforcing a body limit does, and closes.
        try (ServerSocket refusing = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> {
                try (Socket socket = refusing.accept()) {
                    ScriptedServer.readHead(socket.getInputStream());
                    socket.getOutputStream().write("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .getBytes(StandardCharsets.ISO_8859_1));
                } catch (IOException e) {
                    // the test's assertion says what came of it
                }
            });
            URI url = URI.create("http://127.0.0.1:" + refusing.getLocalPort() + "/h");
            HandlerSpec spec = new HandlerSpec("scripted", url, Direction.INBOUND, false, new HandlerSpec.Configs(0, 0, 10, 10_000));
            var item = Json.object().put("itemId", "i-1").put("blob", "x".repeat(32 * 1024 * 1024));
            Outcome outcome = assertTimeoutPreemptively(AMPLE.multipliedBy(4), () -> client().process("crm", spec, item, "i-1", AMPLE));

            Outcome.Failed refused = assertInstanceOf(Outcome.Failed.class, outcome);
            assertFalse(refused.retryable(), refused.error());
            assertTrue(refused.error().contains("413"), refused.error());
        }
    }

    @Test
    void primingMakesACallToLoopbackWhateverThePolicyAndLeavesNoConnectionOpen() {
        HandlerTransport http = new HandlerTransport(HandlerClient.defaultTls());
        HandlerClient publicOnly = new HandlerClient(SigningSecrets.fixed("transport-test-secret"), HandlerUrlPolicy.publicOnly(),
                Clock.systemUTC(), CostTracker.NONE, Metrics.NONE, http);
        assertDoesNotThrow(publicOnly::prime);
        assertEquals(0, http.openConnections(), "a connection made before a snapshot would be dead after its restore");
    }

    private static void assertMalformed(Outcome outcome, String says) {
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, outcome);
        assertTrue(failed.retryable(), failed.error());
        assertTrue(failed.error().startsWith("handler answered malformed HTTP") && failed.error().contains(says), failed.error());
    }

    private static HandlerClient client() {
        return client(HandlerClient.defaultTls());
    }

    private static HandlerClient client(SSLContext tls) {
        return client(new HandlerTransport(tls));
    }

    private static HandlerClient client(HandlerTransport http) {
        return new HandlerClient(SigningSecrets.fixed("transport-test-secret"), LOOPBACK, Clock.systemUTC(), CostTracker.NONE, Metrics.NONE, http);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Outcome process(HandlerClient client, ScriptedServer server, String itemId) {
        return process(client, server.url(), itemId);
    }

    private static Outcome process(HandlerClient client, URI url, String itemId) {
        HandlerSpec spec = new HandlerSpec("scripted", url, Direction.INBOUND, false, new HandlerSpec.Configs(0, 0, 10, 10_000));
        return assertTimeoutPreemptively(AMPLE.multipliedBy(4),
                () -> client.process("crm", spec, Json.object().put("itemId", itemId), itemId, AMPLE));
    }

    private static HandlerClient.Page fetch(HandlerClient client, ScriptedServer server) throws HandlerClient.HandlerCallException {
        HandlerSpec spec = new HandlerSpec("scripted", server.url(), Direction.INBOUND, false, new HandlerSpec.Configs(0, 0, 10, 10_000));
        return client.fetch("crm", spec, Json.object(), AMPLE);
    }

    private static Map<String, Outcome> batch(HandlerClient client, ScriptedServer server) {
        HandlerSpec spec = new HandlerSpec("scripted", server.url(), Direction.INBOUND, true, new HandlerSpec.Configs(0, 0, 10, 10_000));
        List<String> ids = List.of("i-1", "i-2");
        return assertTimeoutPreemptively(AMPLE.multipliedBy(4), () -> client.processBatch("crm", spec,
                ids.stream().map(id -> Json.object().put("itemId", id)).toList(), ids, AMPLE));
    }

    /** A request as the server read it, on the server's n-th connection (from 1). */
    record Request(int connection, String target, Map<String, String> headers, byte[] body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    /** What the server does with a request: writes these bytes (none: hangs up), then keeps the connection or closes it. */
    record Reply(byte[] bytes, boolean close) {
        static Reply json(int status, String body) {
            return raw("HTTP/1.1 " + status + " Scripted\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body);
        }

        static Reply raw(String answer) {
            return raw(answer.getBytes(StandardCharsets.ISO_8859_1));
        }

        static Reply raw(byte[] answer) {
            return new Reply(answer, false);
        }

        static Reply hangUp() {
            return new Reply(new byte[0], true);
        }

        Reply thenClose() {
            return new Reply(bytes, true);
        }
    }

    /** Serves requests on kept-alive connections, each answered by the script given the request and its number on its connection (from 1). */
    private static final class ScriptedServer implements AutoCloseable {
        private final ServerSocket server;
        private final boolean tls;
        private final BiFunction<Request, Integer, Reply> script;
        private final AtomicInteger connections = new AtomicInteger();
        private final AtomicInteger closedByServer = new AtomicInteger();
        private final AtomicInteger closedByClient = new AtomicInteger();
        private final List<Request> requests = new CopyOnWriteArrayList<>();
        private final List<Socket> open = new CopyOnWriteArrayList<>();

        private ScriptedServer(ServerSocket server, boolean tls, BiFunction<Request, Integer, Reply> script) throws IOException {
            this.server = server;
            this.tls = tls;
            this.script = script;
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread.ofVirtual().name("scripted-handler").start(this::accept);
        }

        static ScriptedServer plain(BiFunction<Request, Integer, Reply> script) {
            try {
                return new ScriptedServer(new ServerSocket(), false, script);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        static ScriptedServer tls(SSLContext context, BiFunction<Request, Integer, Reply> script) {
            try {
                return new ScriptedServer(context.getServerSocketFactory().createServerSocket(), true, script);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        URI url() {
            return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + server.getLocalPort() + "/h");
        }

        int connections() {
            return connections.get();
        }

        int closedByServer() {
            return closedByServer.get();
        }

        int closedByClient() {
            return closedByClient.get();
        }

        List<Request> requests() {
            return List.copyOf(requests);
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    open.add(socket);
                    int connection = connections.incrementAndGet();
                    Thread.ofVirtual().start(() -> serve(socket, connection));
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(Socket socket, int connection) {
            try (socket) {
                socket.setSoTimeout(30_000);
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                for (int n = 1; ; n++) {
                    Map<String, String> headers = readHead(in);
                    if (headers == null) {
                        closedByClient.incrementAndGet();
                        return;
                    }
                    byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
                    Request request = new Request(connection, headers.remove(":target"), headers, body);
                    requests.add(request);
                    Reply reply = script.apply(request, n);
                    out.write(reply.bytes());
                    out.flush();
                    if (reply.close()) {
                        closedByServer.incrementAndGet();
                        return;
                    }
                }
            } catch (IOException e) {
                closedByClient.incrementAndGet();
            }
        }

        /** The request's headers, names in lower case; null when the client closed the connection between requests. */
        static Map<String, String> readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int matched = 0;
            byte[] end = {'\r', '\n', '\r', '\n'};
            while (matched < 4) {
                int b = in.read();
                if (b < 0) {
                    if (head.size() == 0) {
                        return null;
                    }
                    throw new IOException("client closed inside a request head");
                }
                head.write(b);
                matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
            }
            Map<String, String> headers = new LinkedHashMap<>();
            String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
            headers.put(":target", lines[0].split(" ")[1]);
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.put(lines[i].substring(0, colon).toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).strip());
            }
            return headers;
        }

        @Override
        public void close() {
            try {
                server.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            for (Socket socket : open) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
