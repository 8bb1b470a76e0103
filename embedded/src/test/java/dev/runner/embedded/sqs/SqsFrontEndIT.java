package dev.runner.embedded.sqs;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SQS front end through the AWS SDK, which checks every MD5 it is given: what it answers
 * itself (sends, receives, deletes, visibility changes on standard queues) behaves as ElasticMQ
 * does, and everything else reaches ElasticMQ unchanged.
 */
class SqsFrontEndIT {

    private static LocalSqs sqs;
    private static SqsClient client;

    @BeforeAll
    static void start() {
        sqs = LocalSqs.start("127.0.0.1", 0, true);
        client = SqsClient.builder()
                .endpointOverride(URI.create(sqs.endpoint()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
    }

    @AfterAll
    static void stop() {
        client.close();
        sqs.close();
    }

    private static String queue(Map<QueueAttributeName, String> attributes) {
        return client.createQueue(b -> b.queueName("q-" + UUID.randomUUID()).attributes(attributes)).queueUrl();
    }

    private static List<Message> receive(String url, int waitSeconds) {
        return client.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(waitSeconds)
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL).messageAttributeNames("All")).messages();
    }

    @Test
    void queueUrlsNameTheFrontEnd() {
        assertTrue(queue(Map.of()).startsWith(sqs.endpoint() + "/"), "queue URL on the front end's port");
    }

    @Test
    void aBatchSentIsReceivedWithItsAttributesAndDeleted() {
        String url = queue(Map.of());
        var before = sqs.frontEndTraffic();
        var sent = client.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("a").messageBody("{\"n\":1}").messageGroupId("tenant-1").build(),
                SendMessageBatchRequestEntry.builder().id("b").messageBody("zwei ü €").build()));
        assertEquals(2, sent.successful().size());
        assertTrue(sent.failed().isEmpty());

        List<Message> received = receive(url, 1);
        assertEquals(2, received.size());
        Message first = received.stream().filter(m -> m.body().equals("{\"n\":1}")).findFirst().orElseThrow();
        assertEquals("1", first.attributesAsStrings().get("ApproximateReceiveCount"));
        assertEquals("tenant-1", first.attributesAsStrings().get("MessageGroupId"));
        assertTrue(Long.parseLong(first.attributesAsStrings().get("SentTimestamp")) > 0);

        var deleted = client.deleteMessageBatch(b -> b.queueUrl(url).entries(received.stream()
                .map(m -> DeleteMessageBatchRequestEntry.builder().id(m.messageId()).receiptHandle(m.receiptHandle()).build()).toList()));
        assertEquals(2, deleted.successful().size());
        var traffic = sqs.frontEndTraffic();
        assertEquals(3, traffic.answered() - before.answered(), "send, receive and delete answered by the front end");
        assertEquals(0, traffic.passed() - before.passed());
        assertEquals(0, Integer.parseInt(client.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.ALL))
                .attributesAsStrings().get("ApproximateNumberOfMessagesNotVisible")));
    }

    @Test
    void aDelayedMessageStaysInvisibleUntilItsDelay() {
        String url = queue(Map.of());
        client.sendMessage(b -> b.queueUrl(url).messageBody("later").delaySeconds(1));
        assertTrue(receive(url, 0).isEmpty(), "not visible during its delay");
        assertEquals("later", receive(url, 3).getFirst().body());
    }

    @Test
    void aVisibilityChangeBringsTheMessageBackCountingTheReceive() {
        String url = queue(Map.of());
        client.sendMessage(b -> b.queueUrl(url).messageBody("again"));
        Message first = receive(url, 1).getFirst();
        client.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(first.receiptHandle()).visibilityTimeout(0));
        Message second = receive(url, 1).getFirst();
        assertEquals(first.messageId(), second.messageId());
        assertEquals("2", second.attributesAsStrings().get("ApproximateReceiveCount"));
    }

    @Test
    void theRedrivePolicyMovesAMessageToItsDeadLetterQueue() {
        String dlq = queue(Map.of());
        String dlqArn = client.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String url = queue(Map.of(QueueAttributeName.REDRIVE_POLICY, "{\"maxReceiveCount\":\"1\",\"deadLetterTargetArn\":\"" + dlqArn + "\"}",
                QueueAttributeName.VISIBILITY_TIMEOUT, "0"));
        client.sendMessage(b -> b.queueUrl(url).messageBody("poison"));
        assertEquals(1, receive(url, 1).size());
        assertTrue(receive(url, 0).isEmpty(), "over maxReceiveCount: moved on the next receive");
        assertEquals("poison", receive(dlq, 1).getFirst().body());
    }

    @Test
    void aLongPollWakesWhenAMessageIsSent() throws Exception {
        String url = queue(Map.of());
        long start = System.nanoTime();
        CompletableFuture<List<Message>> polling = CompletableFuture.supplyAsync(() -> receive(url, 10));
        Thread.sleep(300); // the poll is waiting: what is measured is that the send ends it, not the timeout
        client.sendMessage(b -> b.queueUrl(url).messageBody("wake"));
        assertEquals("wake", polling.get().getFirst().body());
        assertTrue(System.nanoTime() - start < 5_000_000_000L, "woken by the send, not by the 10 s timeout");
    }

    @Test
    void anInvalidReceiptHandleIsRefusedAsElasticMqRefusesIt() {
        String url = queue(Map.of());
        var error = assertThrows(SqsException.class, () -> client.deleteMessage(b -> b.queueUrl(url).receiptHandle("nonsense")));
        assertEquals("ReceiptHandleIsInvalid", error.awsErrorDetails().errorCode());

        client.sendMessage(b -> b.queueUrl(url).messageBody("real"));
        Message message = receive(url, 1).getFirst();
        var batch = client.deleteMessageBatch(b -> b.queueUrl(url).entries(
                DeleteMessageBatchRequestEntry.builder().id("good").receiptHandle(message.receiptHandle()).build(),
                DeleteMessageBatchRequestEntry.builder().id("bad").receiptHandle("nonsense").build()));
        assertEquals(List.of("good"), batch.successful().stream().map(s -> s.id()).toList());
        assertEquals("bad", batch.failed().getFirst().id());
        assertEquals("ReceiptHandleIsInvalid", batch.failed().getFirst().code());
    }

    @Test
    void messageAttributesArriveWithTheirDigest() {
        String url = queue(Map.of());
        client.sendMessage(b -> b.queueUrl(url).messageBody("with attributes").messageAttributes(Map.of(
                "kind", MessageAttributeValue.builder().dataType("String").stringValue("contact").build(),
                "blob", MessageAttributeValue.builder().dataType("Binary").binaryValue(SdkBytes.fromUtf8String("xyz")).build())));
        Message message = receive(url, 1).getFirst(); // the SDK checks MD5OfMessageAttributes
        assertEquals("contact", message.messageAttributes().get("kind").stringValue());
        assertEquals("xyz", message.messageAttributes().get("blob").binaryValue().asUtf8String());
    }

    @Test
    void aFifoQueueIsLeftToElasticMq() {
        String url = client.createQueue(b -> b.queueName("f-" + UUID.randomUUID() + ".fifo").attributes(Map.of(
                QueueAttributeName.FIFO_QUEUE, "true", QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"))).queueUrl();
        client.sendMessage(b -> b.queueUrl(url).messageBody("first").messageGroupId("g"));
        var before = sqs.frontEndTraffic();
        client.sendMessage(b -> b.queueUrl(url).messageBody("first").messageGroupId("g")); // deduplicated
        List<Message> received = receive(url, 1);
        assertEquals(before.answered(), sqs.frontEndTraffic().answered(), "every request passed to ElasticMQ");
        assertEquals(1, received.size());
        assertEquals("g", received.getFirst().attributesAsStrings().get("MessageGroupId"));
    }

    @Test
    void aMissingQueueIsReportedAsElasticMqReportsIt() {
        var error = assertThrows(SqsException.class, () -> client.sendMessage(b -> b.queueUrl(sqs.endpoint() + "/000000000000/missing")
                .messageBody("x")));
        assertTrue(error.awsErrorDetails().errorCode().contains("NonExistentQueue") || error.awsErrorDetails().errorCode().contains("QueueDoesNotExist"),
                error.awsErrorDetails().errorCode());
    }
}
