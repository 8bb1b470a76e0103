package dev.runner.queue;

import dev.runner.cost.CostMeter;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runner's SQS client against the test SQS server, read back with the SDK as a user would. */
class QueueClientIT {

    private static TestStack stack;
    private static QueueClient queues;
    private static final CostMeter costs = new CostMeter();

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        queues = QueueClient.create(URI.create(stack.environment().get("RUNNER_SQS_ENDPOINT")), "us-east-1",
                StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")), costs, QueueClient.Permit.ANY);
    }

    @AfterAll
    static void stop() {
        queues.close();
        stack.close();
    }

    @Test
    void sendsEveryMessageTenPerRequestWithBodiesIntact() {
        String url = stack.url("items-manual");
        List<OutgoingMessage> messages = IntStream.range(0, 25)
                .mapToObj(i -> OutgoingMessage.of("{\"n\":" + i + ",\"text\":\"ação \\\"quoted\\\" \\u2028 😀\"}", null)).toList();
        long before = costs.snapshot().sqsRequests();

        queues.sendAll(url, messages);

        assertEquals(3, costs.snapshot().sqsRequests() - before, "25 messages: 3 requests");
        List<String> received = receiveAll(url, 25).stream().map(Message::body).sorted().toList();
        assertEquals(messages.stream().map(OutgoingMessage::body).sorted().toList(), received);
    }

    @Test
    void aDelayedMessageIsNotVisibleUntilItsDelayAndIsCountedAsDelayed() {
        String url = stack.url("items-queue");
        queues.sendAll(url, List.of(new OutgoingMessage("{\"later\":true}", 30, null)));

        QueueDepth depth = queues.depths(List.of(url)).get(url);
        assertEquals(0, depth.visible());
        assertEquals(1, depth.delayed());
        assertEquals(0, queues.visibleMessages(url));
    }

    @Test
    void aVisibilityChangeHidesAReceivedMessageForItsSeconds() {
        String url = stack.url("items-schedule");
        queues.sendAll(url, List.of(OutgoingMessage.of("{\"retry\":1}", null)));
        Message message = receiveAll(url, 1).getFirst();

        queues.changeVisibility(url, List.of(new QueueClient.VisibilityChange(message.receiptHandle(), 0)));
        await().until(() -> queues.visibleMessages(url) == 1);

        Message again = receiveAll(url, 1).getFirst();
        queues.changeVisibility(url, List.of(new QueueClient.VisibilityChange(again.receiptHandle(), 600)));
        QueueDepth depth = queues.depths(List.of(url)).get(url);
        assertEquals(0, depth.visible());
        assertEquals(1, depth.inFlight());
    }

    @Test
    void aQueueThatDoesNotExistIsAClearErrorNamingIt() {
        String missing = stack.url("items-manual") + "-missing";

        IllegalStateException failure = assertThrows(IllegalStateException.class,
                () -> queues.sendAll(missing, List.of(OutgoingMessage.of("{}", null))));
        String message = failure.getMessage();
        assertTrue(message.contains(missing) && (message.contains("NonExistentQueue") || message.contains("QueueDoesNotExist")), message);
    }

    @Test
    void aQueueTheFunctionIsNotGrantedIsRefusedBeforeAnyRequest() {
        QueueClient denied = QueueClient.create(URI.create("http://127.0.0.1:9"), "us-east-1",
                StaticCredentialsProvider.create(AwsBasicCredentials.create("a", "b")), costs, (use, url) -> false);
        long before = costs.snapshot().sqsRequests();

        assertThrows(QueueClient.NotGranted.class, () -> denied.sendAll("http://127.0.0.1:9/q", List.of(OutgoingMessage.of("{}", null))));
        assertEquals(before, costs.snapshot().sqsRequests());
        denied.close();
    }

    private static List<Message> receiveAll(String url, int count) {
        List<Message> received = new ArrayList<>();
        await().until(() -> {
            received.addAll(stack.sqs().receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                    .messageSystemAttributeNamesWithStrings(QueueAttributeName.ALL.toString())).messages());
            return received.size() >= count;
        });
        return received;
    }
}
