package dev.runner.local.sqs;

import dev.runner.embedded.sqs.ElasticMqQueues;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SQS fair queues, as the local runtime keeps them: on a standard queue, messages that carry a
 * {@code MessageGroupId} (Runner's tier messages carry their tenant) are served so that one
 * group's backlog does not delay the other groups' messages. ElasticMQ serves a queue first in,
 * first out; a mapping's pollers therefore receive ahead into this buffer (up to its capacity, the
 * messages in flight as Lambda's pollers hold theirs) and take each batch round-robin over the
 * groups, one message of each in turn, starting after the group served last. A message received
 * is delivered once, as before; only the order changes. See
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html
 */
final class FairQueueBuffer {

    /** The attribute a message's group is read from (absent: the messages of no group, one group of their own). */
    static final String GROUP = "MessageGroupId";

    private final int capacity;
    /** Messages waiting by group, groups in the order they were first seen; emptied groups are dropped. */
    private final Map<String, Deque<Held>> byGroup = new LinkedHashMap<>();
    private int size;
    /** The group served last: the next batch starts after it. */
    private String lastServed;

    FairQueueBuffer(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity < 1: " + capacity);
        }
        this.capacity = capacity;
    }

    /** Room for this many more messages. */
    synchronized int room() {
        return capacity - size;
    }

    synchronized int size() {
        return size;
    }

    /**
     * How long the longest-waiting message has been held (0 when none): the pollers stop receiving
     * ahead while this is long, so a message never waits in here anywhere near its visibility
     * timeout (it would come back and count a receive).
     */
    synchronized long heldMillis(long nowMillis) {
        long oldest = nowMillis;
        for (Deque<Held> waiting : byGroup.values()) {
            oldest = Math.min(oldest, waiting.peekFirst().receivedAt());
        }
        return Math.max(0, nowMillis - oldest);
    }

    synchronized void offer(List<ElasticMqQueues.Received> messages, long nowMillis) {
        for (ElasticMqQueues.Received message : messages) {
            String group = message.attributes().getOrDefault(GROUP, "");
            byGroup.computeIfAbsent(group, g -> new ArrayDeque<>()).addLast(new Held(message, nowMillis));
            size++;
        }
    }

    /** Up to {@code max} messages, one of each group in turn, starting after the group served last. */
    synchronized List<ElasticMqQueues.Received> take(int max) {
        List<ElasticMqQueues.Received> batch = new ArrayList<>(Math.min(max, size));
        while (batch.size() < max && size > 0) {
            List<String> order = new ArrayList<>(byGroup.keySet());
            int start = lastServed == null ? 0 : (order.indexOf(lastServed) + 1) % order.size();
            for (int k = 0; k < order.size() && batch.size() < max; k++) {
                String group = order.get((start + k) % order.size());
                batch.add(byGroup.get(group).pollFirst().message());
                size--;
                lastServed = group;
            }
            for (Iterator<Deque<Held>> it = byGroup.values().iterator(); it.hasNext(); ) {
                if (it.next().isEmpty()) {
                    it.remove();
                }
            }
        }
        return batch;
    }

    /** A message waiting, with when it was received. */
    private record Held(ElasticMqQueues.Received message, long receivedAt) {
    }
}
