package dev.runner.aws;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.cost.CostMeter;
import dev.runner.json.Json;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.retries.api.BackoffStrategy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How Runner's AWS clients retry and read refusals, against a server that answers as SQS's JSON
 * protocol does with what no test server can be made to say (a throttle, a 5xx, IAM's refusal).
 */
class AwsClientsTest {

    private static final String QUEUE = "http://127.0.0.1:1/000000000000/q";

    private record Reply(int status, String errorCode) {
        static final Reply OK = new Reply(200, null);
    }

    private final AtomicInteger requests = new AtomicInteger();
    private final List<String> authorizations = new CopyOnWriteArrayList<>();
    private final CostMeter costs = new CostMeter();
    private HttpServer server;
    private QueueClient queues;

    private QueueClient queues(IntFunction<Reply> replies) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> answer(exchange, replies.apply(requests.incrementAndGet())));
        server.start();
        queues = QueueClient.create(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "us-east-1",
                StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDTEST", "secret")), costs, QueueClient.Permit.ANY);
        return queues;
    }

    private void answer(HttpExchange exchange, Reply reply) throws IOException {
        JsonNode request = Json.parse(exchange.getRequestBody().readAllBytes());
        authorizations.add(exchange.getRequestHeaders().getFirst("Authorization"));
        byte[] body;
        if (reply.errorCode() == null) {
            var successful = Json.array();
            for (JsonNode entry : request.path("Entries")) {
                successful.addObject().put("Id", entry.path("Id").asText()).put("MessageId", "m-" + entry.path("Id").asText())
                        .put("MD5OfMessageBody", md5(entry.path("MessageBody").asText()));
            }
            body = Json.writeBytes(Json.object().set("Successful", successful));
        } else {
            exchange.getResponseHeaders().add("x-amzn-query-error", reply.errorCode() + ";Sender");
            body = Json.writeBytes(Json.object().put("__type", "com.amazonaws.sqs#" + reply.errorCode()).put("message", "refused"));
        }
        exchange.getResponseHeaders().add("Content-Type", "application/x-amz-json-1.0");
        exchange.sendResponseHeaders(reply.status(), body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }

    @AfterEach
    void stop() {
        if (queues != null) {
            queues.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aThrottleAndA5xxAreTriedAgainAndTheSendIsCountedOnce() throws IOException {
        QueueClient client = queues(n -> switch (n) {
            case 1 -> new Reply(400, "ThrottlingException");
            case 2 -> new Reply(500, "InternalError");
            default -> Reply.OK;
        });

        client.sendAll(QUEUE, List.of(OutgoingMessage.of("{\"n\":1}", "tenant-a")));

        assertEquals(3, requests.get());
        assertEquals(1, costs.snapshot().sqsRequests(), "one batch sent: one request counted, however many attempts");
        assertTrue(authorizations.getFirst().startsWith("AWS4-HMAC-SHA256 Credential=AKIDTEST/"), authorizations.getFirst());
    }

    @Test
    void aServiceThatKeepsFailingIsGivenUpAfterThreeAttempts() throws IOException {
        QueueClient client = queues(n -> new Reply(503, "ServiceUnavailable"));

        IllegalStateException failure = assertThrows(IllegalStateException.class,
                () -> client.sendAll(QUEUE, List.of(OutgoingMessage.of("{}", null))));

        assertEquals(3, requests.get());
        assertTrue(failure.getMessage().contains("ServiceUnavailable") && failure.getMessage().contains(QUEUE), failure.getMessage());
    }

    @Test
    void iamsRefusalIsNotGrantedAndNotTriedAgain() throws IOException {
        QueueClient client = queues(n -> new Reply(403, "AccessDenied"));

        assertThrows(QueueClient.NotGranted.class, () -> client.sendAll(QUEUE, List.of(OutgoingMessage.of("{}", null))));
        assertEquals(1, requests.get());
    }

    @Test
    void aBadOrExpiredTokenIsNotReadAsAMissingGrant() throws IOException {
        QueueClient client = queues(n -> new Reply(403, "InvalidClientTokenId"));

        IllegalStateException failure = assertThrows(IllegalStateException.class,
                () -> client.sendAll(QUEUE, List.of(OutgoingMessage.of("{}", null))));
        assertFalse(failure instanceof QueueClient.NotGranted, failure.toString());
        assertTrue(failure.getMessage().contains("InvalidClientTokenId: refused (HTTP 403)"), failure.getMessage());
    }

    @Test
    void retryWaitsAreSpreadAtRandomUnderACapThatDoubles() {
        BackoffStrategy jitter = AwsClients.fullJitter(AwsClients.ERROR_BASE);
        assertEquals(Duration.ZERO, jitter.computeDelay(1), "the first attempt waits for nothing");
        for (int attempt = 2; attempt <= 3; attempt++) {
            Set<Duration> waits = new HashSet<>();
            long cap = AwsClients.ERROR_BASE.toMillis() << (attempt - 2);
            for (int i = 0; i < 200; i++) {
                Duration wait = jitter.computeDelay(attempt);
                assertTrue(!wait.isNegative() && wait.toMillis() <= cap, wait + " over " + cap + " ms");
                waits.add(wait);
            }
            assertTrue(waits.size() > 10, "spread, not in step: " + waits);
        }
        BackoffStrategy throttled = AwsClients.fullJitter(AwsClients.THROTTLE_BASE);
        for (int i = 0; i < 200; i++) {
            assertTrue(throttled.computeDelay(30).compareTo(Duration.ofSeconds(20)) <= 0, "no wait over 20 s");
        }
    }

    private static String md5(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
