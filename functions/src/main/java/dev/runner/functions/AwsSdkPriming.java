package dev.runner.functions;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.cost.CostTracker;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.secrets.SecretsManagerSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Makes, at init, the AWS calls a function's first invocation makes, {@code GetSecretValue} (every
 * function reads its secrets again after a restore) and {@code SendMessageBatch} (those whose main
 * path sends to SQS), through Runner's own clients over the SDK, once each, against a server of this
 * process's own on the loopback address that answers them with canned replies, and signed with
 * placeholder credentials: the SDK's marshalling, signing, HTTP and unmarshalling classes are then
 * loaded and initialised in a SnapStart snapshot. What a function's main path does not call is not
 * primed: its classes would only make the snapshot larger, and every restore copies the snapshot in.
 * No request leaves the process: no message is sent, no secret read, and the role's credentials are
 * not resolved.
 */
final class AwsSdkPriming {

    private static final String MESSAGE = "{\"priming\":true}";
    private static final AwsCredentialsProvider PLACEHOLDER = StaticCredentialsProvider.create(
            AwsBasicCredentials.create("PRIMING", "priming"));

    private AwsSdkPriming() {}

    /** Primes the SDK's paths, SQS's if {@code sends}; a failure is the caller's to log (the first invocation then loads them). */
    static void run(boolean sends) {
        prime(sends);
    }

    /** Primes; how many requests its canned server answered (two if {@code sends}, else one). */
    static int prime(boolean sends) {
        AtomicInteger answered = new AtomicInteger();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new IllegalStateException("no loopback server for priming the AWS SDK", e);
        }
        server.createContext("/", exchange -> {
            answered.incrementAndGet();
            answer(exchange);
        });
        server.start();
        try {
            URI endpoint = URI.create("http://" + server.getAddress().getAddress().getHostAddress() + ":" + server.getAddress().getPort());
            String region = System.getenv().getOrDefault("AWS_REGION", "us-east-1");
            if (sends) {
                try (QueueClient queues = QueueClient.create(endpoint, region, PLACEHOLDER, CostTracker.NONE, QueueClient.Permit.ANY)) {
                    queues.sendAll(endpoint + "/000000000000/runner-priming", List.of(OutgoingMessage.of(MESSAGE, "priming")));
                }
            }
            try (SecretsManagerSource secrets = new SecretsManagerSource(endpoint, region, PLACEHOLDER)) {
                secrets.read("runner/priming");
            }
        } finally {
            server.stop(0);
        }
        return answered.get();
    }

    /** SQS's and Secrets Manager's answers to the one request each that {@link #prime} makes. */
    private static void answer(HttpExchange exchange) throws IOException {
        try (exchange) {
            exchange.getRequestBody().readAllBytes();
            String target = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
            String body;
            String contentType;
            if (target.equals("AmazonSQS.SendMessageBatch")) {
                contentType = "application/x-amz-json-1.0";
                body = "{\"Successful\":[{\"Id\":\"0\",\"MessageId\":\"priming\",\"MD5OfMessageBody\":\"" + md5(MESSAGE) + "\"}],\"Failed\":[]}";
            } else if (target.equals("secretsmanager.GetSecretValue")) {
                contentType = "application/x-amz-json-1.1";
                body = "{\"ARN\":\"arn:aws:secretsmanager:us-east-1:000000000000:secret:runner/priming\",\"Name\":\"runner/priming\","
                        + "\"SecretString\":\"priming\",\"VersionId\":\"priming\",\"VersionStages\":[\"AWSCURRENT\"]}";
            } else {
                exchange.sendResponseHeaders(400, -1);
                return;
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", contentType);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
        }
    }

    private static String md5(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 unavailable", e);
        }
    }
}
