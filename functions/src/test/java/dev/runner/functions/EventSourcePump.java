package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.app.Runner;
import dev.runner.testing.TestStack;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Plays Lambda's event source mappings for a test stack, on a background thread: receives up to
 * 10 messages per queue (tiers in priority order), hands them to the function class template.yaml
 * wires to that queue, and deletes what the partial batch response does not list as failed; on an
 * exception nothing is deleted. Visibility timeouts and delays are the SQS server's own.
 */
final class EventSourcePump implements AutoCloseable {

    private final TestStack stack;
    private final Map<String, Function<SQSEvent, SQSBatchResponse>> consumers = new LinkedHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    EventSourcePump(TestStack stack, Runner runner) {
        this.stack = stack;
        var items = new ItemWorkerFunction(runner);
        var runs = new RunWorkerFunction(runner);
        var ingest = new IngestFunction(runner);
        var dlq = new DeadLetterFunction(runner);
        for (String suffix : List.of("items-webhook", "items-manual", "items-queue", "items-schedule")) {
            consumers.put(suffix, event -> Lambda.sqs(items, event, TestContext.of("items", 60_000)));
        }
        for (String suffix : List.of("runs-manual", "runs-schedule")) {
            consumers.put(suffix, event -> Lambda.sqs(runs, event, TestContext.of("runs", 120_000)));
        }
        consumers.put("ingest", event -> Lambda.sqs(ingest, event, TestContext.of("ingest", 30_000)));
        for (String suffix : List.of("runs-dlq", "items-dlq", "ingest-dlq")) {
            consumers.put(suffix, event -> Lambda.sqs(dlq, event, TestContext.of("dlq", 30_000)));
        }
        thread = Thread.ofPlatform().daemon().name("pump-" + stack.name()).start(this::loop);
    }

    private void loop() {
        while (running) {
            boolean any = false;
            for (var entry : consumers.entrySet()) {
                if (!running) {
                    return;
                }
                try {
                    any |= deliver(entry.getKey(), entry.getValue());
                } catch (RuntimeException e) {
                    System.err.println("pump: " + entry.getKey() + ": " + e);
                }
            }
            if (!any) {
                // Poll interval of an idle mapping; not a synchronisation point.
                LockSupport.parkNanos(20_000_000);
            }
        }
    }

    private boolean deliver(String suffix, Function<SQSEvent, SQSBatchResponse> consumer) {
        String url = stack.url(suffix);
        List<Message> received = stack.sqs().receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL).messageAttributeNames("All")).messages();
        if (received.isEmpty()) {
            return false;
        }
        Set<String> failed;
        try {
            failed = Lambda.failedIds(consumer.apply(event(received, stack.arn(suffix))));
        } catch (RuntimeException e) {
            System.err.println("pump: function for " + suffix + " threw; the batch comes back after its visibility timeout: " + e);
            return true;
        }
        List<DeleteMessageBatchRequestEntry> deletes = new ArrayList<>();
        for (Message message : received) {
            if (!failed.contains(message.messageId())) {
                deletes.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(deletes.size()))
                        .receiptHandle(message.receiptHandle()).build());
            }
        }
        if (!deletes.isEmpty()) {
            stack.sqs().deleteMessageBatch(b -> b.queueUrl(url).entries(deletes));
        }
        return true;
    }

    /** The messages as the event source mapping delivers them. */
    private static SQSEvent event(List<Message> received, String queueArn) {
        return Lambda.sqsEvent(received.stream().map(message -> {
            Map<String, String> attributes = new LinkedHashMap<>();
            message.messageAttributes().forEach((name, value) -> attributes.put(name, value.stringValue()));
            var record = Lambda.sqsRecord(message.messageId(), message.receiptHandle(), message.body(), queueArn,
                    message.attributesAsStrings(), attributes);
            record.setMd5OfBody(message.md5OfBody());
            return record;
        }).toList());
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
