package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.embedded.sqs.SqsFrontEnd;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts every SQS request that reaches the local runtime's SQS endpoint, by operation: the
 * functions' sends and visibility changes (they speak SQS over HTTP, no SDK in them), the
 * runtime's own and the benchmark's. Seen at the endpoint's front end, after the local IAM check
 * (what it refuses never reaches a queue), so nothing in Runner knows it is being measured. The event source mappings read ElasticMQ in process and count their own.
 */
public final class SqsRequestCounter implements SqsFrontEnd.Inspector {

    private static final Map<String, LongAdder> BY_OPERATION = new ConcurrentHashMap<>();
    /** Requests as SQS bills them: one per 64 KiB of payload. */
    private static final LongAdder CHUNKS = new LongAdder();
    /** Messages sent (SendMessage, SendMessageBatch entries), by queue name. */
    private static final Map<String, LongAdder> SENT_BY_QUEUE = new ConcurrentHashMap<>();
    /**
     * Items sent back to their tier deferred: each item of a message whose {@code deferrals} is above 0
     * (ItemJob counts them; only a deferral's re-send raises it, a retry's re-send carries it as it was).
     */
    private static final LongAdder DEFERRALS = new LongAdder();
    private static final java.util.regex.Pattern DEFERRED = java.util.regex.Pattern.compile("\"deferrals\":[1-9]");

    @Override
    public String inspect(SqsFrontEnd.Request request) {
        String operation = request.operation();
        if (operation == null) {
            return null; // not an SQS request (a function's connection warm-up at init)
        }
        BY_OPERATION.computeIfAbsent(operation, o -> new LongAdder()).increment();
        CHUNKS.add(Math.max(1, (request.bytes() + 65_535) / 65_536));
        JsonNode body = request.body();
        if (body != null && "SendMessageBatch".equals(operation)) {
            sent(body.path("QueueUrl").asText(), body.path("Entries").size());
            body.path("Entries").forEach(entry -> countDeferral(entry.path("MessageBody").asText(null)));
        } else if (body != null && "SendMessage".equals(operation)) {
            sent(body.path("QueueUrl").asText(), 1);
            countDeferral(body.path("MessageBody").asText(null));
        }
        return null;
    }

    private static void sent(String queueUrl, int messages) {
        String queue = queueUrl.substring(queueUrl.lastIndexOf('/') + 1);
        SENT_BY_QUEUE.computeIfAbsent(queue, q -> new LongAdder()).add(messages);
    }

    private static void countDeferral(String body) {
        if (body != null) {
            DEFERRALS.add(DEFERRED.matcher(body).results().count());
        }
    }

    /** Deferrals so far: items re-sent to their tier deferred. */
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
