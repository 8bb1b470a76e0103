package dev.runner.aws;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The JSON-protocol client against a server that answers as AWS does when things go wrong:
 * throttles, 5xx, refusals, no answer at all; and what it signs.
 */
class AwsJsonClientTest {

    private static final AwsKeys KEYS = new AwsKeys("AKIDEXAMPLE", "secret", "session-token");
    private static final Instant AT = Instant.parse("2026-11-30T21:15:42Z");

    private record Seen(String target, Map<String, List<String>> headers, String body) {
        String header(String name) {
            List<String> values = headers.get(name);
            return values == null ? null : values.getFirst();
        }
    }

    private record Reply(int status, String body, String errorTypeHeader) {
        static Reply ok(String body) {
            return new Reply(200, body, null);
        }
    }

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private HttpServer server;

    private URI serve(Function<Integer, Reply> replies) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> answer(exchange, replies));
        server.start();
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    private void answer(HttpExchange exchange, Function<Integer, Reply> replies) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            seen.add(new Seen(exchange.getRequestHeaders().getFirst("X-Amz-Target"), Map.copyOf(exchange.getRequestHeaders()), body));
            Reply reply = replies.apply(seen.size());
            if (reply.errorTypeHeader() != null) {
                exchange.getResponseHeaders().set("x-amzn-ErrorType", reply.errorTypeHeader());
            }
            byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
            exchange.getResponseBody().write(bytes);
        }
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private static AwsJsonClient client(URI endpoint, boolean uncheckedLoopback) {
        return new AwsJsonClient(AwsJsonClient.Service.SQS, endpoint, "eu-west-1", () -> KEYS, Clock.fixed(AT, ZoneOffset.UTC),
                Duration.ofSeconds(5), uncheckedLoopback);
    }

    @Test
    void postsTheOperationAsJsonAndReturnsTheAnswer() throws IOException {
        URI endpoint = serve(n -> Reply.ok("{\"Attributes\":{\"ApproximateNumberOfMessages\":\"7\"}}"));

        JsonNode answer = client(endpoint, true).call("GetQueueAttributes", Json.object().put("QueueUrl", "q"));

        assertEquals("7", answer.path("Attributes").path("ApproximateNumberOfMessages").asText());
        Seen request = seen.getFirst();
        assertEquals("AmazonSQS.GetQueueAttributes", request.target());
        assertEquals("application/x-amz-json-1.0", request.header("Content-type"));
        assertEquals("{\"QueueUrl\":\"q\"}", request.body());
        assertEquals("session-token", request.header("X-amz-security-token"));
    }

    @Test
    void aThrottleAndA5xxAreTriedAgainUpToThreeAttempts() throws IOException {
        URI endpoint = serve(n -> switch (n) {
            case 1 -> new Reply(400, "{\"__type\":\"com.amazonaws.sqs#ThrottlingException\",\"message\":\"slow down\"}", null);
            case 2 -> new Reply(503, "", null);
            default -> Reply.ok("{}");
        });

        client(endpoint, true).call("SendMessageBatch", Json.object());

        assertEquals(3, seen.size());
    }

    @Test
    void retryWaitsAreSpreadAtRandomUnderACapThatDoubles() {
        for (int retry = 1; retry <= 2; retry++) {
            long cap = AwsJsonClient.THROTTLE_BASE_MILLIS << (retry - 1);
            Set<Long> waits = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                long wait = AwsJsonClient.retryWait(retry, AwsJsonClient.THROTTLE_BASE_MILLIS);
                assertTrue(wait >= 0 && wait <= cap, "retry " + retry + " waited " + wait + " ms, cap " + cap);
                waits.add(wait);
            }
            // Functions throttled together must not all come back at the same instant.
            assertTrue(waits.size() > 50, "waits spread out: " + waits.size() + " distinct of 200");
        }
    }

    @Test
    void aRefusalIsNotTriedAgainAndNamesTheServicesErrorType() throws IOException {
        URI endpoint = serve(n -> new Reply(400, "{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\",\"message\":\"The specified queue does not exist.\"}",
                null));

        AwsException refused = assertThrows(AwsException.class, () -> client(endpoint, true).call("SendMessageBatch", Json.object()));

        assertEquals(1, seen.size());
        assertEquals("QueueDoesNotExist", refused.errorType());
        assertEquals("QueueDoesNotExist: The specified queue does not exist. (HTTP 400)", refused.getMessage());
        assertFalse(refused.accessDenied());
    }

    @Test
    void iamsRefusalIsAccessDeniedFromTheHeaderWhenTheBodySaysNothing() throws IOException {
        URI endpoint = serve(n -> new Reply(403, "", "AccessDeniedException:http://internal.amazon.com/coral/"));
        // (AWS's JSON protocol answers IAM's refusal with 403 or 400; the type says it, not the status.)

        AwsException refused = assertThrows(AwsException.class, () -> client(endpoint, true).call("SendMessageBatch", Json.object()));

        assertEquals("AccessDeniedException", refused.errorType());
        assertTrue(refused.accessDenied());
    }

    @Test
    void anEndpointThatNeverAnswersIsUnreachableAfterThreeAttempts() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }

        AwsException failure = assertThrows(AwsException.class,
                () -> client(URI.create("http://127.0.0.1:" + closedPort), true).call("SendMessageBatch", Json.object()));

        assertTrue(failure.unreachable());
        assertTrue(failure.getMessage().startsWith("Unreachable: sqs at http://127.0.0.1:" + closedPort + " unreachable"), failure.getMessage());
    }

    @Test
    void aRedirectIsNotFollowedAndIsARefusal() throws IOException {
        List<String> elsewhere = new CopyOnWriteArrayList<>();
        HttpServer other = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        other.createContext("/", exchange -> {
            try (exchange) {
                elsewhere.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        other.start();
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", exchange -> {
                try (exchange) {
                    exchange.getRequestBody().readAllBytes();
                    exchange.getResponseHeaders().set("Location", "http://127.0.0.1:" + other.getAddress().getPort() + "/");
                    exchange.sendResponseHeaders(307, -1);
                }
            });
            server.start();
            URI endpoint = URI.create("http://127.0.0.1:" + server.getAddress().getPort());

            AwsException refused = assertThrows(AwsException.class,
                    () -> client(endpoint, true).call("SendMessageBatch", Json.object().put("QueueUrl", "q")));

            assertEquals(307, refused.status());
            assertTrue(elsewhere.isEmpty(), "the signed body went nowhere else: " + elsewhere);
        } finally {
            other.stop(0);
        }
    }

    @Test
    void aConnectionThatBreaksBeforeTheAnswerIsSentABoundedNumberOfTimes() throws IOException {
        AtomicInteger received = new AtomicInteger();
        try (ServerSocket socket = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            Thread acceptor = Thread.ofVirtual().start(() -> {
                while (!socket.isClosed()) {
                    try (var connection = socket.accept()) {
                        connection.getInputStream().read(new byte[8192]); // the request, then no answer at all
                        received.incrementAndGet();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            URI endpoint = URI.create("http://127.0.0.1:" + socket.getLocalPort());

            AwsException failure = assertThrows(AwsException.class, () -> client(endpoint, true).call("SendMessageBatch", Json.object()));

            assertTrue(failure.unreachable(), failure.getMessage());
            // Three attempts, each sent at most twice (the JDK's own re-send on a new connection).
            assertTrue(received.get() >= 3 && received.get() <= 6, "sent " + received.get() + " times");
            acceptor.interrupt();
        }
    }

    @Test
    void anAnswerThatIsNotJsonIsAClearFailure() throws IOException {
        URI endpoint = serve(n -> Reply.ok("<html>proxy</html>"));

        AwsException failure = assertThrows(AwsException.class, () -> client(endpoint, true).call("SendMessageBatch", Json.object()));

        assertEquals("InvalidResponse", failure.errorType());
    }

    @Test
    void signsTheBodyTargetAndHostUnlessTheServerIsOnThisMachineAndCheckingIsWaived() throws IOException {
        URI endpoint = serve(n -> Reply.ok("{}"));

        client(endpoint, false).call("SendMessageBatch", Json.object().put("QueueUrl", "q"));
        client(endpoint, true).call("SendMessageBatch", Json.object().put("QueueUrl", "q"));

        String signed = seen.get(0).header("Authorization");
        assertTrue(signed.startsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/eu-west-1/sqs/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-target, Signature="), signed);
        assertFalse(signed.endsWith("0".repeat(64)), signed);
        assertEquals(SigV4.contentSha256("{\"QueueUrl\":\"q\"}".getBytes(StandardCharsets.UTF_8)), seen.get(0).header("X-amz-content-sha256"));

        String unchecked = seen.get(1).header("Authorization");
        assertTrue(unchecked.startsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/eu-west-1/sqs/aws4_request"), unchecked);
        assertTrue(unchecked.endsWith("0".repeat(64)), unchecked);
    }

    @Test
    void anEndpointElsewhereIsNeverSentAnUncheckedSignature() {
        assertFalse(AwsJsonClient.isLoopback(URI.create("https://sqs.eu-west-1.amazonaws.com")));
        assertFalse(AwsJsonClient.isLoopback(URI.create("https://vpce-0a1b.sqs.eu-west-1.vpce.amazonaws.com")));
        assertFalse(AwsJsonClient.isLoopback(URI.create("http://10.0.0.5:9324")));
        assertTrue(AwsJsonClient.isLoopback(URI.create("http://127.0.0.1:9324")));
        assertTrue(AwsJsonClient.isLoopback(URI.create("http://localhost:9324")));
        assertTrue(AwsJsonClient.isLoopback(URI.create("http://[::1]:9324")));
    }

    @Test
    void containerCredentialsAreReadWithTheTokenKeptAndReadAgainBeforeTheyExpire() throws IOException {
        AtomicReference<Instant> now = new AtomicReference<>(AT);
        Clock clock = new Clock() {
            @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
            @Override public Clock withZone(java.time.ZoneId zone) { return this; }
            @Override public Instant instant() { return now.get(); }
        };
        URI endpoint = serve(n -> Reply.ok("{\"AccessKeyId\":\"ASIA" + n + "\",\"SecretAccessKey\":\"s\",\"Token\":\"t" + n
                + "\",\"Expiration\":\"" + AT.plus(Duration.ofHours(1)) + "\"}"));
        ContainerCredentials credentials = new ContainerCredentials(endpoint.resolve("/2018-06-01/credentials"), () -> "the-token", clock);

        assertEquals("ASIA1", credentials.get().accessKeyId());
        assertEquals("ASIA1", credentials.get().accessKeyId(), "kept while valid");
        assertEquals("the-token", seen.getFirst().header("Authorization"));
        assertEquals(1, seen.size());

        now.set(AT.plus(Duration.ofMinutes(56)));
        assertEquals(new AwsKeys("ASIA2", "s", "t2"), credentials.get(), "read again within five minutes of expiry");
        assertFalse(credentials.toString().contains("the-token"));
    }

    @Test
    void aCredentialsEndpointThatRefusesIsAFailureWithoutTheAnswersBody() throws IOException {
        URI endpoint = serve(n -> new Reply(401, "{\"secret\":\"do-not-print\"}", null));
        ContainerCredentials credentials = new ContainerCredentials(endpoint, () -> "wrong", Clock.systemUTC());

        AwsException failure = assertThrows(AwsException.class, credentials::get);

        assertTrue(failure.getMessage().contains("HTTP 401"), failure.getMessage());
        assertFalse(failure.getMessage().contains("do-not-print"));
        assertFalse(failure.accessDenied(), "the endpoint's refusal is not IAM's answer about the function's grants");
    }

    @Test
    void aFailedEarlyRefreshKeepsTheKeysUntilTheyExpire() throws IOException {
        AtomicReference<Instant> now = new AtomicReference<>(AT);
        Clock clock = new Clock() {
            @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
            @Override public Clock withZone(java.time.ZoneId zone) { return this; }
            @Override public Instant instant() { return now.get(); }
        };
        URI endpoint = serve(n -> n == 1
                ? Reply.ok("{\"AccessKeyId\":\"ASIA1\",\"SecretAccessKey\":\"s\",\"Token\":\"t\",\"Expiration\":\"" + AT.plus(Duration.ofHours(1)) + "\"}")
                : new Reply(500, "", null));
        ContainerCredentials credentials = new ContainerCredentials(endpoint, () -> null, clock);
        assertEquals("ASIA1", credentials.get().accessKeyId());

        now.set(AT.plus(Duration.ofMinutes(57)));
        assertEquals("ASIA1", credentials.get().accessKeyId(), "the endpoint failed, the keys still have three minutes");
        assertEquals(4, seen.size(), "one read, then three tries");

        now.set(AT.plus(Duration.ofMinutes(61)));
        assertThrows(AwsException.class, credentials::get, "expired: no keys to sign with");
    }

    @Test
    void aBadOrExpiredTokenIsNotReadAsAMissingGrant() throws IOException {
        URI endpoint = serve(n -> new Reply(403, "{\"__type\":\"com.amazon.coral.service#InvalidClientTokenId\",\"Message\":\"The security token included in the request is invalid.\"}", null));

        AwsException refused = assertThrows(AwsException.class, () -> client(endpoint, true).call("SendMessageBatch", Json.object()));

        assertEquals("InvalidClientTokenId", refused.errorType());
        assertFalse(refused.accessDenied());
    }
}
