package dev.runner.local.sqs;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.embedded.sqs.ElasticMqQueues;
import dev.runner.local.lambda.InvocationMeter;
import dev.runner.local.lambda.LocalFunction;
import dev.runner.local.template.EventSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What Lambda's SQS event source mapping does, for one mapping: {@code MaximumConcurrency} pollers,
 * each receiving up to {@code BatchSize} messages (accumulating for up to
 * {@code MaximumBatchingWindowInSeconds}), invoking the function once per batch and deleting
 * what succeeded. With {@code ReportBatchItemFailures} only the messages not listed in
 * {@code batchItemFailures} are deleted; an error or timeout deletes nothing, so the whole batch
 * comes back after the visibility timeout. See
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 *
 * <p>SQS fair queues (messages carrying a {@code MessageGroupId} on a standard queue, as Runner's
 * tier messages carry their tenant) are kept: the pollers receive ahead into a {@link FairQueueBuffer}
 * and take each batch as SQS serves them in AWS: a noisy tenant's messages (many in flight) after
 * the quiet tenants', so one tenant's backlog does not delay the others' messages.
 *
 * <p>Like Lambda's pollers, which are AWS's own and not the function's, these reach the queue
 * in-process ({@link ElasticMqQueues}: ElasticMQ's queue actors, the same the SQS endpoint uses),
 * not through the SDK and HTTP: the function's own requests are the only SQS traffic that goes
 * over the wire, as in AWS.
 */
public final class QueuePoller implements AutoCloseable {

    /**
     * Lambda's pollers wait 20 s (SQS's maximum); locally 5 s. ElasticMQ finishes every open long
     * poll before it stops, so this bounds how long Ctrl-C takes, and it does not wake the long
     * polls of a dead-letter queue when RedrivePolicy moves a message there, so this also bounds
     * how late such a message is seen. An idle poller costs one request per 5 s, nothing next to
     * the traffic of a run.
     */
    private static final int LONG_POLL_SECONDS = 5;
    /** SQS receives and deletes at most this many messages per call. */
    private static final int SQS_BATCH_LIMIT = 10;
    /** Messages a mapping's pollers hold received ahead, in flight, to serve the groups fairly. */
    static final int FAIR_BUFFER = 1_000;
    /** Receiving ahead stops while a message has waited this long in the buffer (item queues' visibility timeout: 360 s). */
    static final Duration FAIR_AHEAD = Duration.ofSeconds(20);
    private static final Logger LOG = LoggerFactory.getLogger(QueuePoller.class);

    private final ElasticMqQueues queues;
    private final EventSource.Queue source;
    private final LocalFunction function;
    private final String region;
    private final Clock clock;
    private final InvocationMeter meter;
    private final FairQueueBuffer buffer = new FairQueueBuffer(FAIR_BUFFER);
    /** The last receive came back full: more messages are likely waiting. */
    private volatile boolean queueHadMore;
    private final List<Thread> pollers = new ArrayList<>();
    /** Batches being processed right now. */
    private final AtomicInteger busy = new AtomicInteger();
    private final LongAdder receives = new LongAdder();
    private final LongAdder emptyReceives = new LongAdder();
    private final LongAdder deletes = new LongAdder();
    private final LongAdder chunks = new LongAdder();
    private volatile boolean running = true;

    public QueuePoller(ElasticMqQueues queues, EventSource.Queue source, LocalFunction function, String region, Clock clock,
                       InvocationMeter meter) {
        this.queues = queues;
        this.source = source;
        this.function = function;
        this.region = region;
        this.clock = clock;
        this.meter = meter;
    }

    public EventSource.Queue source() {
        return source;
    }

    /**
     * The SQS requests this mapping has made, as SQS would count (and bill) them: each receive
     * (empty ones too), one DeleteMessageBatch per 10 deleted messages, and every request in 64 KiB
     * chunks of payload.
     */
    public record Requests(long receives, long emptyReceives, long deleteBatches, long chunks) {
        public Requests plus(Requests other) {
            return new Requests(receives + other.receives, emptyReceives + other.emptyReceives,
                    deleteBatches + other.deleteBatches, chunks + other.chunks);
        }

        public Requests minus(Requests earlier) {
            return new Requests(receives - earlier.receives, emptyReceives - earlier.emptyReceives,
                    deleteBatches - earlier.deleteBatches, chunks - earlier.chunks);
        }
    }

    public Requests requests() {
        return new Requests(receives.sum(), emptyReceives.sum(), deletes.sum(), chunks.sum());
    }

    public void start() {
        for (int i = 0; i < source.maximumConcurrency(); i++) {
            Thread poller = Thread.ofPlatform().group(meter.threadGroup()).daemon()
                    .name("sqs-" + source.queueName() + "-" + function.logicalId() + "-" + i)
                    .unstarted(this::poll);
            meter.registerCaller(poller);
            pollers.add(poller);
            poller.start();
        }
    }

    /** Stops receiving; batches being processed run to their end. */
    public void signalStop() {
        running = false;
    }

    /** Waits up to {@code grace} for the batches being processed; idle long polls are not waited for. */
    public void awaitIdle(Duration grace) {
        Instant deadline = clock.instant().plus(grace);
        synchronized (busy) {
            while (busy.get() > 0) {
                long left = Duration.between(clock.instant(), deadline).toMillis();
                if (left <= 0) {
                    LOG.warn("{}: {} batches still being processed at shutdown", source.name(), busy.get());
                    return;
                }
                try {
                    busy.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    @Override
    public void close() {
        signalStop();
        awaitIdle(Duration.ofSeconds(10));
    }

    private void poll() {
        while (running) {
            try {
                List<ElasticMqQueues.Received> batch = receiveBatch();
                // Counted before running is read, so a stop either waits for this batch or stops it.
                busy.incrementAndGet();
                try {
                    if (!batch.isEmpty() && running) {
                        deliver(batch);
                    }
                } finally {
                    buffer.done(batch);
                    synchronized (busy) {
                        busy.decrementAndGet();
                        busy.notifyAll();
                    }
                }
            } catch (RuntimeException e) {
                if (!running) {
                    return;
                }
                LOG.warn("{}: receive failed, retrying in 1 s: {}", source.name(), e.toString());
                pause(Duration.ofSeconds(1));
            }
        }
    }

    /**
     * Takes a batch fairly from what was received ahead, long-polling for a first message when
     * there is none, then tops the batch up until it is full or the window closes.
     */
    private List<ElasticMqQueues.Received> receiveBatch() {
        fill();
        List<ElasticMqQueues.Received> batch = new ArrayList<>(buffer.take(source.batchSize()));
        if (batch.isEmpty()) {
            buffer.offer(receive(SQS_BATCH_LIMIT, LONG_POLL_SECONDS), clock.millis());
            fill();
            batch.addAll(buffer.take(source.batchSize()));
        }
        if (batch.isEmpty() || source.batchingWindow().isZero()) {
            return batch;
        }
        Instant windowEnd = clock.instant().plus(source.batchingWindow());
        while (running && batch.size() < source.batchSize()) {
            long left = Duration.between(clock.instant(), windowEnd).toMillis();
            if (left <= 0) {
                break;
            }
            int wait = (int) Math.min(LONG_POLL_SECONDS, left / 1000);
            List<ElasticMqQueues.Received> more = receive(Math.min(SQS_BATCH_LIMIT, source.batchSize() - batch.size()), wait);
            buffer.offer(more, clock.millis());
            batch.addAll(buffer.take(source.batchSize() - batch.size()));
            if (more.isEmpty() && wait == 0) {
                // Less than a second of window left and nothing there: SQS long-polls in whole seconds.
                pause(Duration.ofMillis(Math.min(left, 200)));
            }
        }
        return batch;
    }

    /**
     * Receives ahead while the last receive came back full (the queue has more: a backlog, where
     * the fair order matters) and the buffer has room; an empty queue costs no extra receive.
     */
    private void fill() {
        while (running && queueHadMore && buffer.room() >= SQS_BATCH_LIMIT && buffer.heldMillis(clock.millis()) < FAIR_AHEAD.toMillis()) {
            List<ElasticMqQueues.Received> more = receive(SQS_BATCH_LIMIT, 0);
            buffer.offer(more, clock.millis());
            if (more.size() < SQS_BATCH_LIMIT) {
                return;
            }
        }
    }

    private List<ElasticMqQueues.Received> receive(int max, int waitSeconds) {
        List<ElasticMqQueues.Received> messages = queues.queue(source.queueName())
                .receive(max, waitSeconds, null, List.of("All"), List.of("All"));
        queueHadMore = messages.size() == SQS_BATCH_LIMIT;
        long bytes = 0;
        for (ElasticMqQueues.Received message : messages) {
            bytes += message.body().length();
        }
        receives.increment();
        if (messages.isEmpty()) {
            emptyReceives.increment();
        }
        chunks.add(chunksOf(bytes));
        return messages;
    }

    private void deliver(List<ElasticMqQueues.Received> batch) {
        switch (function.invoke(event(batch), SQSBatchResponse.class)) {
            case LocalFunction.Outcome.Failed failed ->
                    LOG.error("{} failed on a batch of {} from {}; the batch will be retried after the visibility timeout: {} {}",
                            function.logicalId(), batch.size(), source.queueName(), failed.errorType(), failed.message(),
                            failed.cause());
            case LocalFunction.Outcome.Returned returned -> delete(succeeded(batch, returned.value()));
        }
    }

    /** The batch as the event source mapping delivers it. */
    private SQSEvent event(List<ElasticMqQueues.Received> batch) {
        List<SQSEvent.SQSMessage> records = new ArrayList<>(batch.size());
        for (ElasticMqQueues.Received message : batch) {
            var record = new SQSEvent.SQSMessage();
            record.setMessageId(message.messageId());
            record.setReceiptHandle(message.receiptHandle());
            record.setBody(message.body());
            record.setMd5OfBody(message.md5OfBody());
            record.setMd5OfMessageAttributes(message.md5OfMessageAttributes());
            record.setEventSource("aws:sqs");
            record.setEventSourceArn(source.queueArn());
            record.setAwsRegion(region);
            record.setAttributes(new LinkedHashMap<>(message.attributes()));
            Map<String, SQSEvent.MessageAttribute> attributes = new LinkedHashMap<>();
            message.messageAttributes().forEach((name, value) -> {
                var attribute = new SQSEvent.MessageAttribute();
                attribute.setDataType(value.dataType());
                attribute.setStringValue(value.stringValue());
                if (value.binaryValue() != null) {
                    attribute.setBinaryValue(ByteBuffer.wrap(value.binaryValue()));
                }
                attributes.put(name, attribute);
            });
            record.setMessageAttributes(attributes);
            records.add(record);
        }
        var event = new SQSEvent();
        event.setRecords(records);
        return event;
    }

    /** The messages to delete: all of them, or those not reported failed; none if the report is invalid. */
    private List<ElasticMqQueues.Received> succeeded(List<ElasticMqQueues.Received> batch, Object result) {
        if (!source.reportBatchItemFailures() || !(result instanceof SQSBatchResponse response)
                || response.getBatchItemFailures() == null) {
            return batch;
        }
        Set<String> ids = new HashSet<>();
        batch.forEach(m -> ids.add(m.messageId()));
        Set<String> failed = new HashSet<>();
        for (SQSBatchResponse.BatchItemFailure failure : response.getBatchItemFailures()) {
            String id = failure == null ? null : failure.getItemIdentifier();
            if (id == null || id.isBlank() || !ids.contains(id)) {
                // Lambda treats a malformed report as a failure of the whole batch.
                LOG.error("{} reported an unknown batch item failure {}; the whole batch will be retried",
                        function.logicalId(), id);
                return List.of();
            }
            failed.add(id);
        }
        return batch.stream().filter(m -> !failed.contains(m.messageId())).toList();
    }

    private void delete(List<ElasticMqQueues.Received> messages) {
        if (messages.isEmpty()) {
            return;
        }
        try {
            ElasticMqQueues.Queue queue = queues.queue(source.queueName());
            List<CompletableFuture<Optional<ElasticMqQueues.Refusal>>> pending = new ArrayList<>(messages.size());
            messages.forEach(m -> pending.add(queue.delete(m.receiptHandle())));
            long batches = (messages.size() + SQS_BATCH_LIMIT - 1) / SQS_BATCH_LIMIT;
            deletes.add(batches);
            chunks.add(batches);
            for (var deletion : pending) {
                ElasticMqQueues.await(deletion).ifPresent(refusal ->
                        LOG.warn("{}: delete failed: {} {}", source.queueName(), refusal.code(), refusal.message()));
            }
        } catch (RuntimeException e) {
            LOG.warn("{}: delete failed; those messages will be delivered again: {}", source.queueName(), e.toString());
        }
    }

    /** SQS bills a request per 64 KiB of payload. */
    private static long chunksOf(long bytes) {
        return Math.max(1, (bytes + 65_535) / 65_536);
    }

    private static void pause(Duration duration) {
        try {
            Thread.sleep(duration);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
