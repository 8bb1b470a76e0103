package dev.runner.queue;

import dev.runner.aws.AwsClients;
import dev.runner.cost.CostTracker;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * SQS as Runner uses it: batched sends and visibility changes only (10 entries per request, the
 * SQS maximum), chunks sent concurrently, failed entries retried, every request counted so the
 * cost per item can be stated. A {@link Permit} says which queues it may use: a function's client
 * refuses every queue its grants do not name, before any request is made.
 *
 * <p>Over the SDK's SQS client ({@link AwsClients}: its standard retry mode tries a throttle, a 5xx
 * or a broken connection again); a request is counted once, however many attempts it took.
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

    private final SqsClient sqs;
    private final ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor();
    private final CostTracker costs;
    private final Permit permit;

    public QueueClient(SqsClient sqs, CostTracker costs, Permit permit) {
        this.sqs = sqs;
        this.costs = costs;
        this.permit = permit;
    }

    /**
     * @param endpoint    null = the region's SQS; else an override (the local runtime's, LocalStack)
     * @param credentials resolved at each request, never at build: a SnapStart snapshot holds none
     */
    public static QueueClient create(URI endpoint, String region, AwsCredentialsProvider credentials, CostTracker costs, Permit permit) {
        return new QueueClient(AwsClients.configure(SqsClient.builder(), endpoint, region, credentials, Duration.ofSeconds(30)).build(),
                costs, permit);
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

    /** The keys of {@code queues} whose queue shows no visible message now, in the map's order: one request per queue. */
    public <K> Set<K> quiet(Map<K, String> queues) {
        Set<K> quiet = new LinkedHashSet<>();
        queues.forEach((key, url) -> {
            if (visibleMessages(url) == 0) {
                quiet.add(key);
            }
        });
        return quiet;
    }

    public void changeVisibility(String queueUrl, List<VisibilityChange> changes) {
        if (!changes.isEmpty()) {
            require(Use.CHANGE_VISIBILITY, queueUrl);
        }
        for (int from = 0; from < changes.size(); from += MAX_BATCH) {
            List<VisibilityChange> chunk = changes.subList(from, Math.min(changes.size(), from + MAX_BATCH));
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>(chunk.size());
            for (int i = 0; i < chunk.size(); i++) {
                entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id(Integer.toString(i))
                        .receiptHandle(chunk.get(i).receiptHandle()).visibilityTimeout(chunk.get(i).seconds()).build());
            }
            var response = call("ChangeMessageVisibilityBatch", Use.CHANGE_VISIBILITY, queueUrl,
                    () -> sqs.changeMessageVisibilityBatch(b -> b.queueUrl(queueUrl).entries(entries)));
            // A failed visibility change is not fatal: the message returns after the queue's own
            // visibility timeout instead of the backoff, and is still retried.
            for (BatchResultErrorEntry failed : response.failed()) {
                System.err.println("change visibility failed for entry " + failed.id() + ": " + failed.code());
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

    private static final QueueAttributeName VISIBLE = QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES;
    private static final QueueAttributeName IN_FLIGHT = QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE;
    private static final QueueAttributeName DELAYED = QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED;

    private QueueDepth depth(String queueUrl) {
        require(Use.READ_ATTRIBUTES, queueUrl);
        Map<QueueAttributeName, String> attributes = attributes(queueUrl, VISIBLE, IN_FLIGHT, DELAYED);
        return new QueueDepth(count(attributes, VISIBLE), count(attributes, IN_FLIGHT), count(attributes, DELAYED));
    }

    private Map<QueueAttributeName, String> attributes(String queueUrl, QueueAttributeName... names) {
        return call("GetQueueAttributes", Use.READ_ATTRIBUTES, queueUrl,
                () -> sqs.getQueueAttributes(b -> b.queueUrl(queueUrl).attributeNames(names))).attributes();
    }

    private static long count(Map<QueueAttributeName, String> attributes, QueueAttributeName name) {
        String value = attributes.get(name);
        return value == null ? 0 : Long.parseLong(value);
    }

    /** One request, counted; IAM's refusal is {@link NotGranted} (the deployment's policies and the function's grants disagree). */
    private <T> T call(String operation, Use use, String queueUrl, Supplier<T> request) {
        costs.sqsRequest();
        try {
            return request.get();
        } catch (SdkException e) {
            if (AwsClients.accessDenied(e)) {
                throw new NotGranted(use, queueUrl);
            }
            throw new IllegalStateException("SQS " + operation + " on " + queueUrl + " failed: " + AwsClients.describe(e), e);
        }
    }

    private void require(Use use, String queueUrl) {
        if (!permit.allows(use, queueUrl)) {
            throw new NotGranted(use, queueUrl);
        }
    }

    private void sendChunk(String queueUrl, List<OutgoingMessage> chunk) {
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(chunk.size());
        for (int i = 0; i < chunk.size(); i++) {
            OutgoingMessage message = chunk.get(i);
            entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(i)).messageBody(message.body())
                    .delaySeconds(message.delaySeconds()).messageGroupId(message.groupId()).build());
        }
        for (int attempt = 1; ; attempt++) {
            List<SendMessageBatchRequestEntry> sending = entries;
            List<BatchResultErrorEntry> failed = call("SendMessageBatch", Use.SEND, queueUrl,
                    () -> sqs.sendMessageBatch(b -> b.queueUrl(queueUrl).entries(sending))).failed();
            if (failed.isEmpty()) {
                return;
            }
            Set<String> failedIds = failed.stream().map(BatchResultErrorEntry::id).collect(Collectors.toSet());
            boolean senderFault = failed.stream().anyMatch(entry -> Boolean.TRUE.equals(entry.senderFault()));
            if (senderFault || attempt >= ENTRY_RETRIES) {
                BatchResultErrorEntry first = failed.getFirst();
                throw new IllegalStateException("SQS refused " + failedIds.size() + " of " + entries.size()
                        + " messages to " + queueUrl + ": " + first.code() + " " + first.message());
            }
            entries = entries.stream().filter(e -> failedIds.contains(e.id())).toList();
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
        sqs.close();
    }
}
