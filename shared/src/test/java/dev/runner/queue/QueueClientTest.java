package dev.runner.queue;

import dev.runner.cost.CostTracker;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;

import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class QueueClientTest {

    @Test
    void theSdkClientIsMadeOnceOnFirstUseAndNeverForAFunctionThatSendsNothing() {
        AtomicInteger made = new AtomicInteger();
        URI nowhere = URI.create("http://127.0.0.1:9");
        QueueClient queues = new QueueClient(() -> {
            made.incrementAndGet();
            return QueueClient.sqsClient(nowhere, Region.US_EAST_1,
                    StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")));
        }, CostTracker.NONE, QueueClient.Permit.ANY);

        queues.sendAll(nowhere + "/q", List.of());
        assertEquals(0, made.get(), "nothing to send, no client");

        queues.open();
        queues.open();
        assertEquals(1, made.get(), "made once");
        queues.close();
    }

    @Test
    void aRefusedSendIsRefusedBeforeTheClientIsMade() {
        AtomicInteger made = new AtomicInteger();
        QueueClient queues = new QueueClient(() -> {
            made.incrementAndGet();
            throw new AssertionError("not to be made");
        }, CostTracker.NONE, (use, url) -> false);

        assertThrows(QueueClient.NotGranted.class, () -> queues.sendAll("http://127.0.0.1:9/q", List.of(
                OutgoingMessage.of("{}", null))));
        assertEquals(0, made.get());
        queues.close();
    }
}
