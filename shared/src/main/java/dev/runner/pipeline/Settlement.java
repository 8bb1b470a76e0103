package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.handler.Outcome;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueMessage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the fates of one batch's items mean, decided without I/O (docs/item-lifecycle.md): the rows
 * to write, the messages to send where and when, the messages that wait out a backoff, the runs
 * that may have ended. {@link ItemWorker} gathers the facts (admission, claim, handler answers),
 * asks for a {@link Plan}, and carries it out in a fixed order.
 *
 * <ul>
 *   <li>succeeded: recorded; its run may have ended;</li>
 *   <li>a retryable failure with attempts left: recorded retrying; the same message becomes visible
 *       again after the backoff (ChangeMessageVisibility) and is reported as a batch item failure;</li>
 *   <li>a permanent failure, or the last attempt: sent to the items DLQ with its error, recorded as
 *       handed off (the DLQ consumer stamps dead and dlq_at);</li>
 *   <li>claimed again past its last attempt (its worker died mid-call): to the DLQ without a call,
 *       the reclaim's attempt given back, so the row shows the attempts the item used;</li>
 *   <li>deferred (by admission, or by the handler's 429): sent again with a delay, no attempt used;
 *       the row records when the new message is expected back;</li>
 *   <li>skipped (not claimed: ended, parked, another worker's, or an early duplicate): acknowledged.</li>
 * </ul>
 */
final class Settlement {

    /** Times a handler may ask one item to wait with its attempt given back (the waits grow: the retry backoff is their floor). */
    static final int MAX_HANDLER_WAITS = 10;

    /** SQS's longest visibility timeout. */
    static final int MAX_VISIBILITY_SECONDS = 43_200;

    /** Why an {@link Fate.Exhausted} item is dead. */
    static final String EXHAUSTED_ERROR = "no attempt left after its worker stopped mid-call";

    /** A received message and the item job it carries. */
    record Item(QueueMessage message, ItemJob job) {
        UUID itemId() {
            return job.itemId();
        }
    }

    /** What happened to one item in this invocation. */
    sealed interface Fate {
        Item item();

        /** Admission said later (limits, breaker, tenant window): no claim, no attempt. */
        record Deferred(Item item, Duration delay, Reason reason) implements Fate {}

        /** Claimed for attempt {@code attempt} (this one included) and called, with this outcome. */
        record Called(Item item, int attempt, Outcome outcome) implements Fate {}

        /**
         * Claimed for attempt {@code attempt} but never called: its lane ran out of time, or stopped
         * after a call found the endpoint down. The attempt is given back; it is sent again delayed.
         */
        record Unstarted(Item item, int attempt, Duration delay, Reason reason) implements Fate {}

        /**
         * Claimed again after its worker stopped mid-call on the item's last attempt: no call is
         * made. The claim's attempt is given back (no call used it), and the item goes to the DLQ.
         */
        record Exhausted(Item item, int attempt) implements Fate {}

        /** Parked while its handler is paused or its integration disabled: the row holds it. */
        record Parked(Item item) implements Fate {}

        /** Not claimed: already ended, parked, in another worker's hands, or a duplicate ahead of its time. */
        record Skipped(Item item) implements Fate {}
    }

    /** Why an item waits (admission's reasons, and the two the worker adds). */
    enum Reason {
        TENANT_LIMIT, HANDLER_CONCURRENCY, HANDLER_RATE, BREAKER_OPEN, BREAKER_PROBING, ADAPTIVE_STOP, ADAPTIVE_LIMIT,
        /** The handler answered 429 with Retry-After. */
        HANDLER_ASKED,
        /** Paused or disabled as seen by admission, not any more as seen by Postgres: it waits briefly. */
        PAUSED_RACE,
        /** Its message came back before the item was due (a duplicate, or an early return): it waits until then. */
        NOT_DUE,
        /** Claimed, but its lane ran out of the invocation's time before calling it. */
        OUT_OF_TIME,
        /** Claimed, but a call before it in its lane found the endpoint down: it waits out a backoff instead of failing too. */
        HANDLER_FAILING;

        String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Counts of a batch's fates, for logs and metrics. */
    record Tally(int succeeded, int retried, int handedToDlq, int parked, int skipped, Map<Reason, Integer> deferred) {
        int deferredTotal() {
            return deferred.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /**
     * What to do, in this order: send {@code toDlq} (before the row says handed off, so a crash in
     * between leaves a claimable item, not a lost one), write {@code results} (one statement), send
     * {@code resends} (after the rows say queued, so a message that arrives at once finds its item
     * claimable), change visibilities, then check {@code runsToCheck} for completion.
     */
    record Plan(List<OutgoingMessage> toDlq, List<ItemStore.Result> results, Map<String, List<Resend>> resends,
                Map<String, List<QueueClient.VisibilityChange>> backoffs, List<String> failedMessageIds, Set<UUID> runsToCheck,
                Tally tally) {}

    /** A delayed copy of a received message, sent instead of keeping the original (which is acknowledged). */
    record Resend(OutgoingMessage message, String originalMessageId) {}

    private final RunnerConfig.Retry retry;
    private final RunnerConfig.Queues queues;

    Settlement(RunnerConfig.Retry retry, RunnerConfig.Queues queues) {
        this.retry = retry;
        this.queues = queues;
    }

    Plan plan(List<Fate> fates) {
        List<OutgoingMessage> toDlq = new ArrayList<>();
        List<ItemStore.Result> results = new ArrayList<>();
        Map<String, List<Resend>> resends = new LinkedHashMap<>();
        Map<String, List<QueueClient.VisibilityChange>> backoffs = new LinkedHashMap<>();
        List<String> failedMessageIds = new ArrayList<>();
        Set<UUID> runsToCheck = new LinkedHashSet<>();
        int succeeded = 0;
        int retried = 0;
        int handedToDlq = 0;
        int parked = 0;
        int skipped = 0;
        Map<Reason, Integer> deferred = new EnumMap<>(Reason.class);
        int maxAttempts = retry.maxAttempts();
        for (Fate fate : fates) {
            Item item = fate.item();
            ItemJob job = item.job();
            switch (fate) {
                case Fate.Deferred d -> {
                    int seconds = delaySeconds(d.delay());
                    if (d.reason() != Reason.NOT_DUE) {
                        // An early copy leaves the row's due time as it is: rewritten, rounded up to the second,
                        // by each copy of several, it crept ahead of every copy's return and the item never came due.
                        results.add(new ItemStore.Result.Waiting(item.itemId(), seconds));
                    }
                    resends.computeIfAbsent(queues.items(job.trigger()), q -> new ArrayList<>()).add(new Resend(
                            new OutgoingMessage(Json.write(job.deferred().toJson()), seconds, job.tenantId()), item.message().messageId()));
                    deferred.merge(d.reason(), 1, Integer::sum);
                }
                case Fate.Unstarted u -> {
                    giveAttemptBack(item, job.withAttempt(u.attempt() - 1).deferred(), u.delay(), results, resends);
                    deferred.merge(u.reason(), 1, Integer::sum);
                }
                case Fate.Parked p -> parked++;
                case Fate.Skipped s -> skipped++;
                case Fate.Exhausted e -> {
                    handOff(job.withAttempt(e.attempt() - 1), EXHAUSTED_ERROR, true, toDlq, results);
                    handedToDlq++;
                }
                case Fate.Called c -> {
                    switch (bounded(c.outcome(), job)) {
                        case Outcome.Succeeded ok -> {
                            results.add(new ItemStore.Result.Succeeded(item.itemId()));
                            runsToCheck.add(job.runId());
                            succeeded++;
                        }
                        case Outcome.Failed f when f.retryable() && c.attempt() < maxAttempts -> {
                            int seconds = backoffSeconds(c.attempt());
                            results.add(new ItemStore.Result.Retrying(item.itemId(), f.error(), seconds));
                            backoffs.computeIfAbsent(sourceQueueUrl(item), q -> new ArrayList<>())
                                    .add(new QueueClient.VisibilityChange(item.message().receiptHandle(), seconds));
                            failedMessageIds.add(item.message().messageId());
                            retried++;
                        }
                        case Outcome.Failed f -> {
                            String error = f.retryable() ? f.error() + " (attempt " + c.attempt() + " of " + maxAttempts + ")" : f.error();
                            handOff(job.withAttempt(c.attempt()), error, false, toDlq, results);
                            handedToDlq++;
                        }
                        case Outcome.Deferred d -> {
                            // At least the retry backoff of this wait, so Retry-After: 0 does not loop every second.
                            Duration delay = d.delay().compareTo(retry.backoff(job.handlerWaits() + 1)) >= 0
                                    ? d.delay() : retry.backoff(job.handlerWaits() + 1);
                            giveAttemptBack(item, job.withAttempt(c.attempt() - 1).askedToWait(), delay, results, resends);
                            deferred.merge(Reason.HANDLER_ASKED, 1, Integer::sum);
                        }
                    }
                }
            }
        }
        return new Plan(toDlq, results, resends, backoffs, failedMessageIds, runsToCheck,
                new Tally(succeeded, retried, handedToDlq, parked, skipped, deferred));
    }

    /** To the items DLQ with its error, before its row says handed off; {@code attemptUnused} gives the claim's attempt back. */
    private static void handOff(ItemJob job, String error, boolean attemptUnused, List<OutgoingMessage> toDlq,
                                List<ItemStore.Result> results) {
        ObjectNode body = job.toJson();
        body.put("error", error);
        toDlq.add(OutgoingMessage.of(Json.write(body), job.tenantId()));
        results.add(new ItemStore.Result.HandedToDlq(job.itemId(), error, attemptUnused));
    }

    /** A claimed item that was not processed after all: the attempt is given back ({@code resent} says so), and it is sent again delayed. */
    private void giveAttemptBack(Item item, ItemJob resent, Duration delay, List<ItemStore.Result> results,
                                 Map<String, List<Resend>> resends) {
        int seconds = delaySeconds(delay);
        results.add(new ItemStore.Result.Deferred(item.itemId(), seconds));
        resends.computeIfAbsent(queues.items(resent.trigger()), q -> new ArrayList<>()).add(new Resend(
                new OutgoingMessage(Json.write(resent.toJson()), seconds, resent.tenantId()), item.message().messageId()));
    }

    /**
     * A handler's request to wait, once it has asked {@link #MAX_HANDLER_WAITS} times for this item,
     * is a retryable failure: the attempt counts from then on, so every item ends (succeeded or dead)
     * even under a handler that always answers 429.
     */
    static Outcome bounded(Outcome outcome, ItemJob job) {
        if (outcome instanceof Outcome.Deferred d && job.handlerWaits() >= MAX_HANDLER_WAITS) {
            return new Outcome.Failed("the handler asked to wait " + job.handlerWaits() + " times (" + d.reason()
                    + "); its requests to wait now count as failed attempts", true);
        }
        return outcome;
    }

    /** Whole seconds, rounded up, within SQS's 1..900: an item that comes back early is simply deferred again. */
    static int delaySeconds(Duration delay) {
        long seconds = Math.ceilDiv(Math.max(0, delay.toMillis()), 1000L);
        return (int) Math.min(OutgoingMessage.MAX_DELAY_SECONDS, Math.max(1, seconds));
    }

    /** Retry n waits base·2^(n-1), in whole seconds within SQS's visibility range. */
    int backoffSeconds(int failedAttempt) {
        long seconds = Math.ceilDiv(retry.backoff(failedAttempt).toMillis(), 1000L);
        return (int) Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, seconds));
    }

    /** The tier the message came from, by name; its trigger's tier when the source is unknown. */
    private String sourceQueueUrl(Item item) {
        String source = item.message().sourceQueue();
        String tier = queues.items(item.job().trigger());
        if (source == null || tier.endsWith("/" + source)) {
            return tier;
        }
        return queues.items().values().stream().filter(url -> url.endsWith("/" + source)).findFirst().orElse(tier);
    }
}
