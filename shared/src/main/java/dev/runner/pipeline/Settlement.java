package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.handler.Outcome;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.packing.ItemPacker;
import dev.runner.queue.OutgoingMessage;
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
 *   <li>a retryable failure with attempts left: recorded retrying; sent again, delayed by the backoff;</li>
 *   <li>a permanent failure, or the last attempt: sent to the items DLQ with its error, recorded as
 *       handed off (the DLQ consumer stamps dead and dlq_at);</li>
 *   <li>claimed again past its last attempt (its worker died mid-call): to the DLQ without a call,
 *       the reclaim's attempt given back, so the row shows the attempts the item used;</li>
 *   <li>deferred (by admission, or by the handler's 429): sent again with a delay, no attempt used;
 *       the row records when the new message is expected back;</li>
 *   <li>skipped (not claimed: ended, parked, another worker's, or an early duplicate): acknowledged.</li>
 *   <li>pending (the handler answered 202, or status pending in a batch): waits for its callback, no message
 *       (docs/item-lifecycle.md, pending); the callback, or the wait's end, is settled here later as the answer.</li>
 * </ul>
 *
 * <p>A message may carry several items ({@link ItemPacker}), so whatever goes again goes in a
 * message of its own, never as its received message: items going back to one tier with the same
 * delay are packed together, each keeping its own attempts and delay, and every received message
 * is acknowledged. A retry's attempt count travels in the body and in the row, not in SQS's receive
 * count, which only the queue's maxReceiveCount reads: a message that keeps crashing its worker.
 */
final class Settlement {

    /** Times a handler may ask one item to wait with its attempt given back (the waits grow: the retry backoff is their floor). */
    static final int MAX_HANDLER_WAITS = 10;

    /** The longest retry backoff (12 hours); a copy sent for it arrives after SQS's longest delay and waits again for the rest. */
    static final int MAX_BACKOFF_SECONDS = 43_200;

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
        /** Its lane, or the batch's waves, ran out of the invocation's time before calling it. */
        OUT_OF_TIME,
        /** Claimed, but a call before it in its lane found the endpoint down: it waits out a backoff instead of failing too. */
        HANDLER_FAILING;

        String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Counts of a batch's fates, for logs and metrics. */
    record Tally(int succeeded, int retried, int handedToDlq, int parked, int skipped, int pending, Map<Reason, Integer> deferred) {
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
    record Plan(List<OutgoingMessage> toDlq, List<ItemStore.Result> results, Map<String, List<Resend>> resends, Set<UUID> runsToCheck,
                List<Waiting> waiting, Tally tally) {}

    /** An item answered pending in attempt {@code attempt}: it begins to wait for its callback once the results are written. */
    record Waiting(Item item, int attempt) {}

    /**
     * A delayed message carrying items that go again, sent instead of keeping the messages they came in
     * ({@code originalMessageIds}, acknowledged; kept instead if this send fails).
     */
    record Resend(OutgoingMessage message, int items, Set<String> originalMessageIds) {}

    private final RunnerConfig.Retry retry;
    private final RunnerConfig.Queues queues;
    private final ItemPacker packer;

    Settlement(RunnerConfig.Retry retry, RunnerConfig.Queues queues, ItemPacker packer) {
        this.retry = retry;
        this.queues = queues;
        this.packer = packer;
    }

    Plan plan(List<Fate> fates) {
        List<OutgoingMessage> toDlq = new ArrayList<>();
        List<ItemStore.Result> results = new ArrayList<>();
        List<ItemPacker.Entry<String>> again = new ArrayList<>();
        Set<UUID> runsToCheck = new LinkedHashSet<>();
        List<Waiting> waiting = new ArrayList<>();
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
                    again.add(new ItemPacker.Entry<>(job.deferred(), seconds, item.message().messageId()));
                    deferred.merge(d.reason(), 1, Integer::sum);
                }
                case Fate.Unstarted u -> {
                    giveAttemptBack(item, job.withAttempt(u.attempt() - 1).deferred(), u.delay(), results, again);
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
                            // Past SQS's longest delay the copy arrives early and waits again for the row's due time (NOT_DUE).
                            again.add(new ItemPacker.Entry<>(job.withAttempt(c.attempt()),
                                    Math.min(seconds, OutgoingMessage.MAX_DELAY_SECONDS), item.message().messageId()));
                            retried++;
                        }
                        case Outcome.Failed f -> {
                            String error = f.retryable() ? f.error() + " (attempt " + c.attempt() + " of " + maxAttempts + ")" : f.error();
                            handOff(job.withAttempt(c.attempt()), error, false, toDlq, results);
                            handedToDlq++;
                        }
                        case Outcome.Pending p -> waiting.add(new Waiting(item, c.attempt()));
                        case Outcome.Deferred d -> {
                            // At least the retry backoff of this wait, so Retry-After: 0 does not loop every second.
                            Duration delay = d.delay().compareTo(retry.backoff(job.handlerWaits() + 1)) >= 0
                                    ? d.delay() : retry.backoff(job.handlerWaits() + 1);
                            giveAttemptBack(item, job.withAttempt(c.attempt() - 1).askedToWait(), delay, results, again);
                            deferred.merge(Reason.HANDLER_ASKED, 1, Integer::sum);
                        }
                    }
                }
            }
        }
        return new Plan(toDlq, results, resends(again), runsToCheck, waiting,
                new Tally(succeeded, retried, handedToDlq, parked, skipped, waiting.size(), deferred));
    }

    /** What goes again, packed by tier, run, handler and delay: never with an item going back another way. */
    private Map<String, List<Resend>> resends(List<ItemPacker.Entry<String>> again) {
        Map<String, List<Resend>> resends = new LinkedHashMap<>();
        for (ItemPacker.Parcel<String> parcel : packer.pack(again)) {
            resends.computeIfAbsent(queues.items(parcel.trigger()), q -> new ArrayList<>())
                    .add(new Resend(parcel.message(), parcel.items(), parcel.origins()));
        }
        return resends;
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
    private static void giveAttemptBack(Item item, ItemJob resent, Duration delay, List<ItemStore.Result> results,
                                        List<ItemPacker.Entry<String>> again) {
        int seconds = delaySeconds(delay);
        results.add(new ItemStore.Result.Deferred(item.itemId(), seconds));
        again.add(new ItemPacker.Entry<>(resent, seconds, item.message().messageId()));
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

    /** Retry n waits base·2^(n-1), in whole seconds, at most {@link #MAX_BACKOFF_SECONDS}. */
    int backoffSeconds(int failedAttempt) {
        long seconds = Math.ceilDiv(retry.backoff(failedAttempt).toMillis(), 1000L);
        return (int) Math.min(MAX_BACKOFF_SECONDS, Math.max(1, seconds));
    }
}
