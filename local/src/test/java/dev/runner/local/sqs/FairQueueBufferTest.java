package dev.runner.local.sqs;

import dev.runner.embedded.sqs.ElasticMqQueues;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** SQS fair queues as the local pollers keep them: a noisy group's backlog does not hold a quiet group's messages back. No I/O. */
class FairQueueBufferTest {

    @Test
    void aQuietGroupsMessagesAreServedBesideANoisyGroupsBacklog() {
        var buffer = new FairQueueBuffer(100);
        List<ElasticMqQueues.Received> noisy = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            noisy.add(message("a" + i, "tenant-a"));
        }
        buffer.offer(noisy, 1_000);
        assertEquals(500, buffer.heldMillis(1_500));
        buffer.offer(List.of(message("b0", "tenant-b"), message("b1", "tenant-b"), message("n0", null)), 1_200);

        assertEquals(List.of("a0", "b0", "n0", "a1"), ids(buffer.take(4)), "one of each group in turn, in the order first seen");
        assertEquals(List.of("b1", "a2", "a3"), ids(buffer.take(3)), "the next batch starts after the group served last");
        assertEquals(List.of("a4", "a5", "a6", "a7"), ids(buffer.take(10)), "alone, a group gets everything");
        assertEquals(0, buffer.size());
        assertEquals(0, buffer.heldMillis(9_000), "nothing held");
        assertEquals(100, buffer.room());
    }

    /** SQS's rule: a group with 30 or more in flight and over 10 % of all in flight is noisy; the quiet groups' messages go first. */
    @Test
    void aNoisyGroupsBacklogWaitsForTheQuietGroupsMessages() {
        var buffer = new FairQueueBuffer(1_000);
        List<ElasticMqQueues.Received> noisy = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            noisy.add(message("a" + i, "tenant-a"));
        }
        buffer.offer(noisy, 0);
        List<ElasticMqQueues.Received> first = buffer.take(30);
        assertEquals(30, buffer.inFlight("tenant-a"), "alone, a group gets everything");

        buffer.offer(List.of(message("b0", "tenant-b"), message("b1", "tenant-b"), message("c0", "tenant-c")), 0);
        assertEquals(List.of("b0", "c0", "b1", "a30"), ids(buffer.take(4)), "tenant-a is noisy: the quiet tenants first, then its backlog");

        buffer.done(first);
        assertEquals(1, buffer.inFlight("tenant-a"));
        buffer.offer(List.of(message("b2", "tenant-b")), 0);
        assertEquals(List.of("b2", "a31"), ids(buffer.take(2)), "no longer noisy: turns again, after the group served last (a30)");
    }

    private static ElasticMqQueues.Received message(String id, String group) {
        return new ElasticMqQueues.Received(id, "rh-" + id, "{}", "", group == null ? Map.of() : Map.of(FairQueueBuffer.GROUP, group), Map.of(), null);
    }

    private static List<String> ids(List<ElasticMqQueues.Received> batch) {
        return batch.stream().map(ElasticMqQueues.Received::messageId).toList();
    }
}
