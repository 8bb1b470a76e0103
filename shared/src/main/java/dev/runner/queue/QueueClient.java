package dev.runner.queue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.aws.AwsException;
import dev.runner.aws.AwsJsonClient;
import dev.runner.aws.AwsKeys;
import dev.runner.cost.CostTracker;
import dev.runner.json.Json;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * SQS as Runner uses it: batched sends and visibility changes only (10 entries per request, the
 * SQS maximum), chunks sent concurrently, failed entries retried, every request counted so the
 * cost per item can be stated. A {@link Permit} says which queues it may use: a function's client
 * refuses every queue its grants do not name, before any request is made.
 *
 * <p>SQS's JSON protocol is spoken directly ({@link AwsJsonClient}): the SDK's client cost each
 * function that sends ≈ 1,300 classes and a few hundred ms at cold start, and the run worker's
 * fan-out a fifth of the local runtime's CPU in its marshalling and signing (bench/README.md).
 */
public final class QueueClient implements AutoCloseable {

    /** SQS takes at most 10 entries per batch request. */
    public static final int MAX_BATCH = 10;
    /** A batch request's payload is capped too (1 MiB; 256 KiB on older accounts): stay under the lower. */
    static final int MAX_BATCH_BYTES = 256 * 1024 - 1024;
    private static final int ENTRY_RETRIES = 3;

    /** A new visibility for a received message: when it comes back. */
    public record VisibilityChange(String receiptHandle, int seconds) {}

    /** What the client is asked to do to a queue. */
    public enum Use { SEND, CHANGE_VISIBILITY, READ_ATTRIBUTES }

    /** Which queues the client may use. */
    @FunctionalInterface
    public interface Permit {
        /** Every queue: tests and tools that drive the core without a function. */
        Permit ANY = (use, queueUrl) -> true;

        boolean allows(Use use, String queueUrl);
    }

    /** A queue the function was not granted: a bug in its declared grants or in the code, never retried. */
    public static final class NotGranted extends IllegalStateException {
        public NotGranted(Use use, String queueUrl) {
            super("this function is not granted " + use.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                    + " on " + queueUrl + "; declare it in the function's grants and template.yaml's policies");
        }
    }

    private final AwsJsonClient sqs;
    private final ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor();
    private final CostTracker costs;
    private final Permit permit;

    public QueueClient(AwsJsonClient sqs, CostTracker costs, Permit permit) {
        this.sqs = sqs;
        this.costs = costs;
        this.permit = permit;
    }

    /**
     * @param endpoint null = the region's SQS; else an override (the local runtime's, LocalStack);
     *                 one on this machine is sent unhashed signatures (servers there check none)
     * @param keys     asked at each request
     */
    public static QueueClient create(URI endpoint, String region, Supplier<AwsKeys> keys, Clock clock, CostTracker costs, Permit permit) {
        return new QueueClient(new AwsJsonClient(AwsJsonClient.Service.SQS, endpoint, region, keys, clock, Duration.ofSeconds(30), true),
                costs, permit);
    }

    /** Opens a connection to SQS now (a function's init, off the request path); not a request SQS counts. */
    public void open() {
        sqs.warm();
    }

    /** Sends every message, 10 per request, requests in parallel; throws if any message could not be sent. */
    public void sendAll(String queueUrl, List<OutgoingMessage> messages) {
        if (messages.isEmpty()) {
            return;
        }
        require(Use.SEND, queueUrl);
        List<List<OutgoingMessage>> chunks = chunk(messages);
        if (chunks.size() == 1) {
            sendChunk(queueUrl, chunks.getFirst());
            return;
        }
        List<Future<?>> pending = new ArrayList<>(chunks.size());
        for (List<OutgoingMessage> chunk : chunks) {
            pending.add(senders.submit(() -> sendChunk(queueUrl, chunk)));
        }
        await(pending);
    }

    /** Messages visible on the queue now (SQS's approximate count): more than zero means a backlog waits its turn. */
    public long visibleMessages(String queueUrl) {
        require(Use.READ_ATTRIBUTES, queueUrl);
        return count(attributes(queueUrl, VISIBLE), VISIBLE);
    }

    public void changeVisibility(String queueUrl, List<VisibilityChange> changes) {
        if (!changes.isEmpty()) {
            require(Use.CHANGE_VISIBILITY, queueUrl);
        }
        for (int from = 0; from < changes.size(); from += MAX_BATCH) {
            List<VisibilityChange> chunk = changes.subList(from, Math.min(changes.size(), from + MAX_BATCH));
            ObjectNode request = Json.object().put("QueueUrl", queueUrl);
            ArrayNode entries = request.putArray("Entries");
            for (int i = 0; i < chunk.size(); i++) {
                entries.addObject().put("Id", Integer.toString(i)).put("ReceiptHandle", chunk.get(i).receiptHandle())
                        .put("VisibilityTimeout", chunk.get(i).seconds());
            }
            JsonNode response = call("ChangeMessageVisibilityBatch", Use.CHANGE_VISIBILITY, queueUrl, request);
            // A failed visibility change is not fatal: the message returns after the queue's own
            // visibility timeout instead of the backoff, and is still retried.
            for (JsonNode failed : response.path("Failed")) {
                System.err.println("change visibility failed for entry " + failed.path("Id").asText() + ": " + failed.path("Code").asText());
            }
        }
    }

    /**
     * The approximate depth of each queue: one GetQueueAttributes request per queue, all at once.
     * A queue that did not answer is absent (its depth is unknown), the others are still returned.
     */
    public Map<String, QueueDepth> depths(Collection<String> queueUrls) {
        Map<String, Future<QueueDepth>> pending = new LinkedHashMap<>();
        for (String url : queueUrls) {
            pending.put(url, senders.submit(() -> depth(url)));
        }
        Map<String, QueueDepth> depths = new LinkedHashMap<>();
        pending.forEach((url, future) -> {
            try {
                depths.put(url, future.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException e) {
                System.err.println("queue depth unknown for " + url + ": " + e.getCause());
            }
        });
        return depths;
    }

    private static final String VISIBLE = "ApproximateNumberOfMessages";
    private static final String IN_FLIGHT = "ApproximateNumberOfMessagesNotVisible";
    private static final String DELAYED = "ApproximateNumberOfMessagesDelayed";

    private QueueDepth depth(String queueUrl) {
        require(Use.READ_ATTRIBUTES, queueUrl);
        JsonNode attributes = attributes(queueUrl, VISIBLE, IN_FLIGHT, DELAYED);
        return new QueueDepth(count(attributes, VISIBLE), count(attributes, IN_FLIGHT), count(attributes, DELAYED));
    }

    private JsonNode attributes(String queueUrl, String... names) {
        ObjectNode request = Json.object().put("QueueUrl", queueUrl);
        ArrayNode wanted = request.putArray("AttributeNames");
        for (String name : names) {
            wanted.add(name);
        }
        return call("GetQueueAttributes", Use.READ_ATTRIBUTES, queueUrl, request).path("Attributes");
    }

    private static long count(JsonNode attributes, String name) {
        JsonNode value = attributes.get(name);
        return value == null || value.isNull() ? 0 : Long.parseLong(value.asText());
    }

    /** One request, counted; IAM's refusal is {@link NotGranted} (the deployment's policies and the function's grants disagree). */
    private JsonNode call(String operation, Use use, String queueUrl, ObjectNode request) {
        costs.sqsRequest();
        try {
            return sqs.call(operation, request);
        } catch (AwsException e) {
            if (e.accessDenied()) {
                throw new NotGranted(use, queueUrl);
            }
            throw new IllegalStateException("SQS " + operation + " on " + queueUrl + " failed: " + e.getMessage(), e);
        }
    }

    private void require(Use use, String queueUrl) {
        if (!permit.allows(use, queueUrl)) {
            throw new NotGranted(use, queueUrl);
        }
    }

    private void sendChunk(String queueUrl, List<OutgoingMessage> chunk) {
        List<ObjectNode> entries = new ArrayList<>(chunk.size());
        for (int i = 0; i < chunk.size(); i++) {
            OutgoingMessage message = chunk.get(i);
            ObjectNode entry = Json.object().put("Id", Integer.toString(i)).put("MessageBody", message.body())
                    .put("DelaySeconds", message.delaySeconds());
            if (message.groupId() != null) {
                entry.put("MessageGroupId", message.groupId());
            }
            entries.add(entry);
        }
        for (int attempt = 1; ; attempt++) {
            ObjectNode request = Json.object().put("QueueUrl", queueUrl);
            request.putArray("Entries").addAll(entries);
            JsonNode failed = call("SendMessageBatch", Use.SEND, queueUrl, request).path("Failed");
            if (failed.isEmpty()) {
                return;
            }
            List<String> failedIds = new ArrayList<>();
            boolean senderFault = false;
            for (JsonNode entry : failed) {
                failedIds.add(entry.path("Id").asText());
                senderFault |= entry.path("SenderFault").asBoolean(false);
            }
            if (senderFault || attempt >= ENTRY_RETRIES) {
                JsonNode first = failed.get(0);
                throw new IllegalStateException("SQS refused " + failedIds.size() + " of " + entries.size()
                        + " messages to " + queueUrl + ": " + first.path("Code").asText() + " " + first.path("Message").asText());
            }
            entries = entries.stream().filter(e -> failedIds.contains(e.get("Id").asText())).toList();
        }
    }

    private static List<List<OutgoingMessage>> chunk(List<OutgoingMessage> messages) {
        List<List<OutgoingMessage>> chunks = new ArrayList<>();
        List<OutgoingMessage> current = new ArrayList<>(MAX_BATCH);
        int bytes = 0;
        for (OutgoingMessage message : messages) {
            int size = message.body().length() * 3; // worst case UTF-8, cheap and safe
            if (!current.isEmpty() && (current.size() == MAX_BATCH || bytes + size > MAX_BATCH_BYTES)) {
                chunks.add(current);
                current = new ArrayList<>(MAX_BATCH);
                bytes = 0;
            }
            current.add(message);
            bytes += size;
        }
        chunks.add(current);
        return chunks;
    }

    private static void await(List<Future<?>> pending) {
        RuntimeException failure = null;
        for (Future<?> future : pending) {
            try {
                future.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while sending", e);
            } catch (java.util.concurrent.ExecutionException e) {
                if (failure == null) {
                    failure = e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void close() {
        senders.shutdown();
    }
}
