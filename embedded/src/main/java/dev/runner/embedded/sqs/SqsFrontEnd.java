package dev.runner.embedded.sqs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.elasticmq.Limits;
import org.elasticmq.StrictSQSLimits$;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * The SQS endpoint of the local runtime: ElasticMQ, with the seven requests a queue's traffic is
 * made of (SendMessage, ReceiveMessage, DeleteMessage, ChangeMessageVisibility and their batch
 * forms, in AWS's JSON protocol) answered straight from ElasticMQ's queue actors
 * ({@link ElasticMqQueues}), and every other request, or any of those seven that is not plainly
 * valid on a standard queue, passed to ElasticMQ's own REST server unchanged. ElasticMQ rebuilds
 * its whole route tree and asks its queue manager twice for every request, which made it most of
 * the local runtime's CPU; the queues' behaviour and every error answer remain ElasticMQ's.
 *
 * <p>A request is answered here only when ElasticMQ would accept it: standard queue, no message
 * attributes, no deduplication id, no trace header, sizes within SQS's limits. A delete or
 * visibility change that ElasticMQ refuses changed nothing, so it is passed on and ElasticMQ
 * gives its own refusal.
 */
public final class SqsFrontEnd implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TARGET_PREFIX = "AmazonSQS.";
    private static final String JSON_TYPE = "application/x-amz-json-1.0";
    /** SQS's batch entry ids: letters, digits, hyphen and underscore, 1 to 80. */
    private static final Pattern BATCH_ID = Pattern.compile("[A-Za-z0-9_-]{1,80}");
    /** ElasticMQ's rule for MessageGroupId (alphanumeric and punctuation, 1 to 128). */
    private static final Pattern GROUP_ID = Pattern.compile("^[a-zA-Z0-9!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]{1,128}$");
    private static final Set<String> HANDLED = Set.of("SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage",
            "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch");
    private static final int MAX_BATCH = 10;
    private static final int MAX_DELAY_SECONDS = 900;
    private static final int MAX_WAIT_SECONDS = 20;
    private static final int MAX_VISIBILITY_SECONDS = 43_200;

    /**
     * Sees every request before it is answered or passed on: the local runtime's IAM (which may
     * refuse it, as AWS does before a request reaches the queue) and the benchmark's counters. The
     * functions speak to SQS over HTTP with no SDK in them, so this is where their requests can be seen.
     */
    @FunctionalInterface
    public interface Inspector {
        /** @return null to let the request through, else why IAM refuses it (answered 403 AccessDenied) */
        String inspect(Request request);
    }

    /**
     * A request as the front end received it.
     *
     * @param accessKeyId the access key its SigV4 Authorization names; null when unsigned
     * @param operation   {@code SendMessageBatch}…; null when it is not the JSON protocol
     * @param body        its JSON body; null when it is not JSON
     * @param bytes       its body's length
     */
    public record Request(String accessKeyId, String operation, JsonNode body, int bytes) {}

    private final List<Inspector> inspectors = new CopyOnWriteArrayList<>();
    private final HttpServer server;
    private final ExecutorService threads;
    private final ElasticMqQueues queues;
    private final HttpClient proxy;
    /** ElasticMQ's REST server, once it listens. */
    private volatile URI elasticMq;
    private final java.util.concurrent.atomic.LongAdder answered = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder passed = new java.util.concurrent.atomic.LongAdder();

    private SqsFrontEnd(HttpServer server, ExecutorService threads, ElasticMqQueues queues) {
        this.server = server;
        this.threads = threads;
        this.queues = queues;
        this.proxy = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(threads)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * Takes {@code host:port} (0 = a free port) now, so ElasticMQ can be told the address its queue
     * URLs must name; {@link #start} then serves.
     */
    public static SqsFrontEnd bind(String host, int port, ElasticMqQueues queues) {
        AtomicInteger count = new AtomicInteger();
        // Platform threads: a long poll holds one for up to 20 s, and they stay apart from the virtual threads of the functions.
        ExecutorService threads = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "sqs-front-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 1024);
            var frontEnd = new SqsFrontEnd(server, threads, queues);
            server.setExecutor(threads);
            server.createContext("/", frontEnd::handle);
            return frontEnd;
        } catch (IOException e) {
            threads.shutdownNow();
            throw new IllegalStateException("SQS front end did not bind " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /** Serves, in front of ElasticMQ's REST server at {@code elasticMq}. */
    public void start(URI elasticMq) {
        this.elasticMq = elasticMq;
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Requests answered here, and requests passed to ElasticMQ's REST server, so far. */
    public record Traffic(long answered, long passed) {}

    public Traffic traffic() {
        return new Traffic(answered.sum(), passed.sum());
    }

    /** Adds an inspector, for as long as the front end serves. */
    public void inspect(Inspector inspector) {
        inspectors.add(inspector);
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
            String operation = target != null && target.startsWith(TARGET_PREFIX) ? target.substring(TARGET_PREFIX.length()) : null;
            JsonNode request = null;
            if (operation != null || !inspectors.isEmpty()) {
                try {
                    request = body.length == 0 ? null : JSON.readTree(body);
                } catch (IOException e) {
                    request = null; // ElasticMQ's REST layer answers what is not JSON
                }
            }
            if (!inspectors.isEmpty()) {
                Request seen = new Request(accessKeyId(exchange.getRequestHeaders().getFirst("Authorization")), operation, request, body.length);
                for (Inspector inspector : inspectors) {
                    String denial = inspector.inspect(seen);
                    if (denial != null) {
                        deny(exchange, denial);
                        return;
                    }
                }
            }
            byte[] answer = null;
            if (operation != null && request != null && "POST".equals(exchange.getRequestMethod())
                    && !exchange.getRequestHeaders().containsKey("X-Amzn-Trace-Id")) {
                try {
                    answer = answer(operation, request);
                } catch (IOException | ElasticMqQueues.NoSuchQueue | NotPlain e) {
                    answer = null; // ElasticMQ's REST layer answers, errors included
                }
            }
            if (answer != null) {
                answered.increment();
                exchange.getResponseHeaders().set("Content-Type", JSON_TYPE);
                exchange.sendResponseHeaders(200, answer.length == 0 ? -1 : answer.length);
                exchange.getResponseBody().write(answer);
            } else {
                passed.increment();
                pass(exchange, body);
            }
        }
    }

    /** SQS's refusal of a caller IAM does not allow, as AWS answers it in the JSON protocol (the query-compatible code the SDK reads too). */
    private static void deny(HttpExchange exchange, String denial) throws IOException {
        byte[] answer = JSON.writeValueAsBytes(JSON.createObjectNode().put("__type", "com.amazon.coral.service#AccessDeniedException")
                .put("Message", denial));
        exchange.getResponseHeaders().set("Content-Type", JSON_TYPE);
        exchange.getResponseHeaders().set("x-amzn-query-error", "AccessDenied;Sender");
        exchange.sendResponseHeaders(403, answer.length);
        exchange.getResponseBody().write(answer);
    }

    /** The access key id a SigV4 {@code Authorization} header names; null when there is none. */
    public static String accessKeyId(String authorization) {
        if (authorization == null) {
            return null;
        }
        int credential = authorization.indexOf("Credential=");
        if (credential < 0) {
            return null;
        }
        int start = credential + "Credential=".length();
        int slash = authorization.indexOf('/', start);
        return slash < 0 ? null : authorization.substring(start, slash);
    }

    /** The answer to a plainly valid request on a standard queue; null = ElasticMQ's REST layer answers it. */
    private byte[] answer(String action, JsonNode request) throws IOException {
        if (!HANDLED.contains(action) || !request.isObject() || !request.path("QueueUrl").isTextual()) {
            return null;
        }
        String name = ElasticMqQueues.queueName(request.get("QueueUrl").asText());
        if (name.endsWith(".fifo")) {
            return null;
        }
        ElasticMqQueues.Queue queue = queues.queue(name);
        return switch (action) {
            case "SendMessage" -> sendMessage(queue, request);
            case "SendMessageBatch" -> sendMessageBatch(queue, request);
            case "ReceiveMessage" -> receiveMessage(queue, request);
            case "DeleteMessage" -> deleteMessage(queue, request);
            case "DeleteMessageBatch" -> deleteMessageBatch(queue, request);
            case "ChangeMessageVisibility" -> changeVisibility(queue, request);
            case "ChangeMessageVisibilityBatch" -> changeVisibilityBatch(queue, request);
            default -> null;
        };
    }

    private byte[] sendMessage(ElasticMqQueues.Queue queue, JsonNode request) throws IOException {
        Outgoing message = outgoing(request);
        requireTotalLength(message.body().length());
        var sent = ElasticMqQueues.await(queue.send(message.body(), message.delaySeconds(), message.groupId(), 0));
        return JSON.writeValueAsBytes(JSON.createObjectNode().put("MD5OfMessageBody", sent.md5OfBody()).put("MessageId", sent.messageId()));
    }

    private byte[] sendMessageBatch(ElasticMqQueues.Queue queue, JsonNode request) throws IOException {
        List<JsonNode> entries = entries(request);
        List<Outgoing> messages = new ArrayList<>(entries.size());
        int length = 0;
        for (JsonNode entry : entries) {
            Outgoing message = outgoing(entry);
            messages.add(message);
            length += message.body().length();
        }
        requireTotalLength(length);
        List<CompletableFuture<ElasticMqQueues.Sent>> pending = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            Outgoing message = messages.get(i);
            pending.add(queue.send(message.body(), message.delaySeconds(), message.groupId(), i));
        }
        ObjectNode response = JSON.createObjectNode();
        ArrayNode successful = response.putArray("Successful");
        for (int i = 0; i < pending.size(); i++) {
            var sent = ElasticMqQueues.await(pending.get(i));
            successful.addObject().put("Id", entries.get(i).get("Id").asText())
                    .put("MD5OfMessageBody", sent.md5OfBody()).put("MessageId", sent.messageId());
        }
        return JSON.writeValueAsBytes(response);
    }

    private byte[] receiveMessage(ElasticMqQueues.Queue queue, JsonNode request) throws IOException {
        if (request.has("ReceiveRequestAttemptId")) {
            return null;
        }
        int max = optionalInt(request, "MaxNumberOfMessages", 1, MAX_BATCH, 1);
        Integer wait = request.has("WaitTimeSeconds") ? optionalInt(request, "WaitTimeSeconds", 0, MAX_WAIT_SECONDS, 0) : null;
        Integer visibility = request.has("VisibilityTimeout")
                ? optionalInt(request, "VisibilityTimeout", 0, MAX_VISIBILITY_SECONDS, 0) : null;
        Set<String> attributeNames = new HashSet<>(strings(request, "AttributeNames"));
        attributeNames.addAll(strings(request, "MessageSystemAttributeNames"));
        List<String> messageAttributeNames = strings(request, "MessageAttributeNames");
        ObjectNode response = JSON.createObjectNode();
        ArrayNode messages = response.putArray("Messages");
        for (var received : queue.receive(max, wait, visibility, attributeNames, messageAttributeNames)) {
            ObjectNode message = messages.addObject();
            if (!received.attributes().isEmpty()) {
                ObjectNode attributes = message.putObject("Attributes");
                received.attributes().forEach(attributes::put);
            }
            message.put("Body", received.body()).put("MD5OfBody", received.md5OfBody());
            if (received.md5OfMessageAttributes() != null) {
                message.put("MD5OfMessageAttributes", received.md5OfMessageAttributes());
                ObjectNode attributes = message.putObject("MessageAttributes");
                received.messageAttributes().forEach((name, value) -> {
                    ObjectNode attribute = attributes.putObject(name).put("DataType", value.dataType());
                    if (value.binaryValue() != null) {
                        attribute.put("BinaryValue", value.binaryValue());
                    } else {
                        attribute.put("StringValue", value.stringValue());
                    }
                });
            }
            message.put("MessageId", received.messageId()).put("ReceiptHandle", received.receiptHandle());
        }
        return JSON.writeValueAsBytes(response);
    }

    private byte[] deleteMessage(ElasticMqQueues.Queue queue, JsonNode request) {
        String receipt = text(request, "ReceiptHandle");
        return ElasticMqQueues.await(queue.delete(receipt)).isEmpty() ? new byte[0] : null;
    }

    private byte[] changeVisibility(ElasticMqQueues.Queue queue, JsonNode request) {
        String receipt = text(request, "ReceiptHandle");
        int seconds = requiredInt(request, "VisibilityTimeout", 0, MAX_VISIBILITY_SECONDS);
        return ElasticMqQueues.await(queue.changeVisibility(receipt, seconds)).isEmpty() ? new byte[0] : null;
    }

    private byte[] deleteMessageBatch(ElasticMqQueues.Queue queue, JsonNode request) throws IOException {
        List<JsonNode> entries = entries(request);
        List<CompletableFuture<Optional<ElasticMqQueues.Refusal>>> pending = new ArrayList<>();
        for (JsonNode entry : entries) {
            text(entry, "ReceiptHandle");
        }
        for (JsonNode entry : entries) {
            pending.add(queue.delete(entry.get("ReceiptHandle").asText()));
        }
        return batchAnswer(entries, pending);
    }

    private byte[] changeVisibilityBatch(ElasticMqQueues.Queue queue, JsonNode request) throws IOException {
        List<JsonNode> entries = entries(request);
        for (JsonNode entry : entries) {
            text(entry, "ReceiptHandle");
            requiredInt(entry, "VisibilityTimeout", 0, MAX_VISIBILITY_SECONDS);
        }
        List<CompletableFuture<Optional<ElasticMqQueues.Refusal>>> pending = new ArrayList<>();
        for (JsonNode entry : entries) {
            pending.add(queue.changeVisibility(entry.get("ReceiptHandle").asText(), entry.get("VisibilityTimeout").asInt()));
        }
        return batchAnswer(entries, pending);
    }

    /** ElasticMQ's batch answer: the entries that succeeded, and "Failed" only when some did not. */
    private static byte[] batchAnswer(List<JsonNode> entries, List<CompletableFuture<Optional<ElasticMqQueues.Refusal>>> pending)
            throws IOException {
        ObjectNode response = JSON.createObjectNode();
        ArrayNode successful = response.putArray("Successful");
        ArrayNode failed = JSON.createArrayNode();
        for (int i = 0; i < entries.size(); i++) {
            String id = entries.get(i).get("Id").asText();
            Optional<ElasticMqQueues.Refusal> refusal = ElasticMqQueues.await(pending.get(i));
            if (refusal.isEmpty()) {
                successful.addObject().put("Id", id);
            } else {
                failed.addObject().put("Code", refusal.get().code()).put("Id", id)
                        .put("Message", refusal.get().message()).put("SenderFault", true);
            }
        }
        if (!failed.isEmpty()) {
            response.set("Failed", failed);
        }
        return JSON.writeValueAsBytes(response);
    }

    /** A message to send, when it is one ElasticMQ would take as it is. */
    private record Outgoing(String body, Integer delaySeconds, String groupId) {}

    private static Outgoing outgoing(JsonNode entry) {
        if (nonEmpty(entry, "MessageAttributes") || nonEmpty(entry, "MessageSystemAttributes") || entry.has("MessageDeduplicationId")) {
            throw new NotPlain();
        }
        String body = text(entry, "MessageBody");
        if (!ElasticMqQueues.acceptableBody(body)) {
            throw new NotPlain();
        }
        Integer delay = entry.has("DelaySeconds") ? optionalInt(entry, "DelaySeconds", 0, MAX_DELAY_SECONDS, 0) : null;
        String groupId = null;
        if (entry.has("MessageGroupId")) {
            groupId = text(entry, "MessageGroupId");
            if (!GROUP_ID.matcher(groupId).matches()) {
                throw new NotPlain();
            }
        }
        return new Outgoing(body, delay, groupId);
    }

    private static void requireTotalLength(int length) {
        if (Limits.verifyMessageLength(length, StrictSQSLimits$.MODULE$).isLeft()) {
            throw new NotPlain();
        }
    }

    /** A batch's entries: 1 to 10, ids well formed and distinct. */
    private static List<JsonNode> entries(JsonNode request) {
        JsonNode entries = request.path("Entries");
        if (!entries.isArray() || entries.isEmpty() || entries.size() > MAX_BATCH) {
            throw new NotPlain();
        }
        Set<String> ids = new HashSet<>();
        List<JsonNode> list = new ArrayList<>(entries.size());
        for (JsonNode entry : entries) {
            String id = text(entry, "Id");
            if (!BATCH_ID.matcher(id).matches() || !ids.add(id)) {
                throw new NotPlain();
            }
            list.add(entry);
        }
        return list;
    }

    private static boolean nonEmpty(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && !value.isNull() && !(value.isObject() && value.isEmpty());
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new NotPlain();
        }
        return value.asText();
    }

    private static int requiredInt(JsonNode node, String field, int min, int max) {
        JsonNode value = node.get(field);
        if (value == null || !value.canConvertToInt() || !value.isIntegralNumber() || value.asInt() < min || value.asInt() > max) {
            throw new NotPlain();
        }
        return value.asInt();
    }

    private static int optionalInt(JsonNode node, String field, int min, int max, int absent) {
        return node.has(field) ? requiredInt(node, field, min, max) : absent;
    }

    private static List<String> strings(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null) {
            return List.of();
        }
        if (!value.isArray()) {
            throw new NotPlain();
        }
        List<String> strings = new ArrayList<>(value.size());
        for (JsonNode element : value) {
            if (!element.isTextual()) {
                throw new NotPlain();
            }
            strings.add(element.asText());
        }
        return strings;
    }

    /** Hands the request to ElasticMQ's REST server as it came, and its answer back as it went. */
    private void pass(HttpExchange exchange, byte[] body) throws IOException {
        URI uri = elasticMq.resolve(exchange.getRequestURI().toString());
        var request = HttpRequest.newBuilder(uri).method(exchange.getRequestMethod(),
                body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        exchange.getRequestHeaders().forEach((name, values) -> {
            if (!RESTRICTED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                values.forEach(value -> request.header(name, value));
            }
        });
        HttpResponse<byte[]> response;
        try {
            response = proxy.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exchange.sendResponseHeaders(503, -1);
            return;
        }
        for (Map.Entry<String, List<String>> header : response.headers().map().entrySet()) {
            String name = header.getKey().toLowerCase(java.util.Locale.ROOT);
            if (!RESTRICTED.contains(name) && !name.equals(":status") && !name.equals("transfer-encoding") && !name.equals("date")) {
                exchange.getResponseHeaders().put(header.getKey(), header.getValue());
            }
        }
        byte[] answer = response.body();
        exchange.sendResponseHeaders(response.statusCode(), answer.length == 0 ? -1 : answer.length);
        exchange.getResponseBody().write(answer);
    }

    /** Headers the JDK's HTTP client sets itself. */
    private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade", "keep-alive");

    /** A request this front end leaves to ElasticMQ's REST layer. */
    private static final class NotPlain extends RuntimeException {
        NotPlain() {
            super(null, null, false, false);
        }
    }
}
