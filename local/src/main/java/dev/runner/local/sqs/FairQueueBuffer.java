package dev.runner.local.sqs;

import dev.runner.embedded.sqs.ElasticMqQueues;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SQS fair queues, as the local runtime keeps them: on a standard queue, messages that carry a
 * {@code MessageGroupId} (Runner's tier messages carry their tenant) are served so that one
 * group's backlog does not delay the other groups' messages. ElasticMQ serves a queue first in,
 * first out; a mapping's pollers therefore receive ahead into this buffer (up to its capacity) and
 * take each batch from it as SQS would: a group is a noisy neighbour while it has at least 30
 * messages in flight (handed to the consumer, not yet done) and more than 10 % of all in flight;
 * quiet groups' messages go first, one of each in turn starting after the group served last, and
 * then the noisy groups', fewest in flight first. SQS also marks a group noisy by its share of the
 * consumers' processing time; that measure is not kept here. A message received is delivered once,
 * as before; only the order changes. See
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html
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
    /** Messages handed to the consumer and not yet done, by group. */
    private final Map<String, Integer> inFlight = new HashMap<>();
    private int inFlightTotal;

    /** SQS's thresholds for a noisy neighbour by concurrency share: this many of its own in flight ... */
    static final int NOISY_IN_FLIGHT = 30;
    /** ... and more than this share of all in flight. */
    static final double NOISY_SHARE = 0.10;

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
            String group = group(message);
            byGroup.computeIfAbsent(group, g -> new ArrayDeque<>()).addLast(new Held(message, nowMillis));
            size++;
        }
    }

    /**
     * Up to {@code max} messages: the quiet groups' first, one of each in turn starting after the
     * group served last, then the noisy groups', fewest in flight first. They count in flight until
     * {@link #done}.
     */
    synchronized List<ElasticMqQueues.Received> take(int max) {
        List<ElasticMqQueues.Received> batch = new ArrayList<>(Math.min(max, size));
        while (batch.size() < max && size > 0) {
            String group = next();
            Deque<Held> waiting = byGroup.get(group);
            batch.add(waiting.pollFirst().message());
            if (waiting.isEmpty()) {
                byGroup.remove(group);
            }
            size--;
            lastServed = group;
            inFlight.merge(group, 1, Integer::sum);
            inFlightTotal++;
        }
        return batch;
    }

    /** The consumer is done with these messages (deleted, failed or deferred: no longer in flight). */
    synchronized void done(List<ElasticMqQueues.Received> messages) {
        for (ElasticMqQueues.Received message : messages) {
            String group = group(message);
            Integer count = inFlight.get(group);
            if (count != null) {
                inFlightTotal--;
                if (count <= 1) {
                    inFlight.remove(group);
                } else {
                    inFlight.put(group, count - 1);
                }
            }
        }
    }

    /** Messages of a group in flight now. */
    synchronized int inFlight(String group) {
        return inFlight.getOrDefault(group, 0);
    }

    /** The group to serve next: the first quiet one after the group served last, else the noisy one with the fewest in flight. */
    private String next() {
        List<String> order = new ArrayList<>(byGroup.keySet());
        int start = lastServed == null ? 0 : order.indexOf(lastServed) + 1;
        String leastNoisy = null;
        for (int k = 0; k < order.size(); k++) {
            String group = order.get((start + k) % order.size());
            if (!noisy(group)) {
                return group;
            }
            if (leastNoisy == null || inFlight(group) < inFlight(leastNoisy)) {
                leastNoisy = group;
            }
        }
        return leastNoisy;
    }

    private boolean noisy(String group) {
        int own = inFlight.getOrDefault(group, 0);
        return own >= NOISY_IN_FLIGHT && own > NOISY_SHARE * inFlightTotal;
    }

    private static String group(ElasticMqQueues.Received message) {
        return message.attributes().getOrDefault(GROUP, "");
    }

    /** A message waiting, with when it was received. */
    private record Held(ElasticMqQueues.Received message, long receivedAt) {
    }
}
