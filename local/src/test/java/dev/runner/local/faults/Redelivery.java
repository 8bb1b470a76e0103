package dev.runner.local.faults;

import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.json.Json;
import dev.runner.run.RunJob;
import dev.runner.trigger.Trigger;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fault run's own SQS client on the runtime's queues: it sends copies of messages Runner
 * already sent (SQS delivers at least once: a copy is what a second delivery looks like to the
 * functions), plays the ingest queue's producers, and shortens visibility timeouts as a shorter
 * function Timeout would.
 */
final class Redelivery implements AutoCloseable {

    private static final int SQS_BATCH = 10;
    /** Items of one run in one copied message. */
    private static final int PACK = 5;

    private final SqsClient sqs;
    private final Collection<String> queueUrls;

    /** @param queueUrls every queue of the runtime (its {@code queueUrls()} values) */
    Redelivery(String sqsEndpoint, Collection<String> queueUrls) {
        this.sqs = SqsClient.builder()
                .endpointOverride(URI.create(sqsEndpoint))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClient(UrlConnectionHttpClient.builder().socketTimeout(Duration.ofSeconds(30)).build())
                .build();
        this.queueUrls = List.copyOf(queueUrls);
    }

    /**
     * Sets the visibility timeout of the queues whose name ends with each key. The template's are six
     * times each function's Timeout (AWS's rule); a run of minutes needs the same order at a smaller scale.
     */
    void visibility(Map<String, Duration> byQueueSuffix) {
        byQueueSuffix.forEach((suffix, timeout) -> {
            for (String url : queueUrls) {
                if (url.endsWith(suffix)) {
                    sqs.setQueueAttributes(b -> b.queueUrl(url)
                            .attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, Long.toString(timeout.toSeconds()))));
                }
            }
        });
    }

    /** Copies of item messages, each onto its run's tier: the items of one run packed a few to a message, as producers pack them. */
    void items(List<ItemJob> jobs) {
        Map<List<Object>, List<ItemJob>> byRun = new LinkedHashMap<>();
        for (ItemJob job : jobs) {
            byRun.computeIfAbsent(List.of(job.trigger(), job.runId()), k -> new ArrayList<>()).add(job);
        }
        Map<String, List<String>> byQueue = new LinkedHashMap<>();
        byRun.forEach((key, members) -> {
            for (int from = 0; from < members.size(); from += PACK) {
                byQueue.computeIfAbsent(queue("-items-" + members.getFirst().trigger().wireName()), q -> new ArrayList<>())
                        .add(ItemMessage.write(members.subList(from, Math.min(members.size(), from + PACK))));
            }
        });
        byQueue.forEach(this::send);
    }

    /**
     * Copies of what reaches the items DLQ for these (dead) items: the item worker's hand-off of one
     * item with its error, and, for every other item, a pack without error, as maxReceiveCount moves one.
     */
    void deadLetters(List<ItemJob> jobs) {
        List<String> bodies = new ArrayList<>();
        Map<java.util.UUID, List<ItemJob>> packs = new LinkedHashMap<>();
        for (int i = 0; i < jobs.size(); i++) {
            ItemJob job = jobs.get(i);
            if (i % 2 == 0) {
                bodies.add(Json.write(job.toJson().put("error", "a copy sent again by the fault run")));
            } else {
                packs.computeIfAbsent(job.runId(), r -> new ArrayList<>()).add(job);
            }
        }
        packs.values().forEach(members -> bodies.add(ItemMessage.write(members)));
        send(queue("-items-dlq"), bodies);
    }

    /** RunJobs sent again, onto the runs tier of their trigger. */
    void runs(List<RunJob> jobs) {
        Map<String, List<String>> byQueue = new LinkedHashMap<>();
        for (RunJob job : jobs) {
            String tier = job.trigger() == Trigger.SCHEDULE ? "-runs-schedule" : "-runs-manual";
            byQueue.computeIfAbsent(queue(tier), q -> new ArrayList<>()).add(Json.write(job.toJson()));
        }
        byQueue.forEach(this::send);
    }

    /** A message on the ingest queue with these string attributes (a producer's signed message, or a copy of one). */
    void ingest(String body, Map<String, String> attributes) {
        Map<String, MessageAttributeValue> values = new LinkedHashMap<>();
        attributes.forEach((name, value) -> values.put(name, MessageAttributeValue.builder().dataType("String").stringValue(value).build()));
        sqs.sendMessage(b -> b.queueUrl(queue("-ingest")).messageBody(body).messageAttributes(values));
    }

    private void send(String queueUrl, List<String> bodies) {
        for (int from = 0; from < bodies.size(); from += SQS_BATCH) {
            List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
            for (int i = from; i < Math.min(bodies.size(), from + SQS_BATCH); i++) {
                entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(i)).messageBody(bodies.get(i)).build());
            }
            var result = sqs.sendMessageBatch(b -> b.queueUrl(queueUrl).entries(entries));
            if (!result.failed().isEmpty()) {
                throw new IllegalStateException("SQS refused copies: " + result.failed());
            }
        }
    }

    private String queue(String suffix) {
        return queueUrls.stream().filter(url -> url.endsWith(suffix)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no queue ending with " + suffix + " among " + queueUrls));
    }

    @Override
    public void close() {
        sqs.close();
    }
}
