package dev.runner.bench;

import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.interceptor.SdkExecutionAttribute;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every SQS request this JVM makes, by operation: the functions' sends and visibility
 * changes and the local event source mappings' receives and deletes alike. Registered as an SDK
 * global interceptor (resource software/amazon/awssdk/global/handlers/execution.interceptors), so
 * nothing in Runner knows it is being measured.
 */
public final class SqsRequestCounter implements ExecutionInterceptor {

    private static final Map<String, LongAdder> BY_OPERATION = new ConcurrentHashMap<>();
    /** Requests as SQS bills them: one per 64 KiB of payload. */
    private static final LongAdder CHUNKS = new LongAdder();
    /** Messages sent (SendMessage, SendMessageBatch entries), by queue name. */
    private static final Map<String, LongAdder> SENT_BY_QUEUE = new ConcurrentHashMap<>();
    /**
     * Items sent back to their tier deferred: an item message whose {@code deferrals} is above 0
     * (ItemJob counts them; only a deferral's re-send raises it, retries wait out a visibility change).
     */
    private static final LongAdder DEFERRALS = new LongAdder();
    private static final java.util.regex.Pattern DEFERRED = java.util.regex.Pattern.compile("\"deferrals\":[1-9]");

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        String operation = attributes.getAttribute(SdkExecutionAttribute.OPERATION_NAME);
        BY_OPERATION.computeIfAbsent(operation == null ? "?" : operation, o -> new LongAdder()).increment();
        long bytes = context.requestBody().flatMap(body -> body.optionalContentLength()).orElse(0L);
        CHUNKS.add(Math.max(1, (bytes + 65_535) / 65_536));
        switch (context.request()) {
            case SendMessageBatchRequest batch -> {
                sent(batch.queueUrl(), batch.entries().size());
                batch.entries().forEach(entry -> countDeferral(entry.messageBody()));
            }
            case SendMessageRequest single -> {
                sent(single.queueUrl(), 1);
                countDeferral(single.messageBody());
            }
            default -> { }
        }
    }

    private static void sent(String queueUrl, int messages) {
        String queue = queueUrl.substring(queueUrl.lastIndexOf('/') + 1);
        SENT_BY_QUEUE.computeIfAbsent(queue, q -> new LongAdder()).add(messages);
    }

    private static void countDeferral(String body) {
        if (body != null && DEFERRED.matcher(body).find()) {
            DEFERRALS.increment();
        }
    }

    /** Deferrals so far: item messages re-sent to their tier with a delay. */
    public static long deferrals() {
        return DEFERRALS.sum();
    }

    /** Messages sent so far to the queues whose name contains {@code part}. */
    public static long sentTo(String part) {
        return SENT_BY_QUEUE.entrySet().stream().filter(e -> e.getKey().contains(part)).mapToLong(e -> e.getValue().sum()).sum();
    }

    /** Requests so far counted in 64 KiB chunks of payload. */
    public static long chunks() {
        return CHUNKS.sum();
    }

    public static Map<String, Long> snapshot() {
        Map<String, Long> counts = new TreeMap<>();
        BY_OPERATION.forEach((operation, count) -> counts.put(operation, count.sum()));
        return counts;
    }

    public static long total(Map<String, Long> snapshot) {
        return snapshot.values().stream().mapToLong(Long::longValue).sum();
    }

    /** What happened between two snapshots. */
    public static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> now = snapshot();
        Map<String, Long> delta = new TreeMap<>();
        now.forEach((operation, count) -> {
            long d = count - before.getOrDefault(operation, 0L);
            if (d > 0) {
                delta.put(operation, d);
            }
        });
        return delta;
    }
}
