package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunJob;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.function.LongSupplier;

/**
 * Fetches a run's items from its handler page by page ({@link FetchStep}) and fans them out onto
 * the items tier of the run's trigger. When the invocation's time runs short it goes on in a new
 * message; a fetch that may succeed later comes back after a backoff.
 */
public final class RunWorker {

    private static final Log LOG = Log.of(RunWorker.class);

    private final RunnerConfig config;
    private final Integrations integrations;
    private final QueueClient queues;
    private final DeadLetterStore deadLetters;
    private final FetchStep fetching;
    private final ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();
    /*
     * A batch's jobs (up to ten) fetch at once, more than the pool's connections, and in the local runtime the
     * function's execution environments share this worker and its pool. Their store work takes turns at the pool
     * rather than the pool growing to the batch: the statements are short next to the handlers' calls, and a bigger
     * pool per environment would multiply the connections Postgres holds by the tier's concurrency.
     */
    private final StoreTurns storeTurns;

    public RunWorker(RunnerConfig config, Integrations integrations, QueueClient queues, DeadLetterStore deadLetters, FetchStep fetching) {
        this.config = config;
        this.integrations = integrations;
        this.queues = queues;
        this.deadLetters = deadLetters;
        this.fetching = fetching;
        this.storeTurns = new StoreTurns(config.databasePoolSize());
    }

    /** How one RunJob of a batch ended: done (its message deleted), or to be received again, after a backoff or the visibility timeout. */
    private sealed interface JobEnd {
        record Done() implements JobEnd {}

        record Again(String messageId) implements JobEnd {}

        record BackOff(String messageId, String queueUrl, QueueClient.VisibilityChange change) implements JobEnd {}
    }

    /**
     * Fetches the batch's runs at once, each on a virtual thread: one tenant's slow handler does not
     * hold back the other tenants' runs of the batch (a schedule tick starts many at once), and the
     * invocation lasts about as long as its slowest fetch, not their sum. A handler with a
     * concurrency limit gets no more of the batch's fetches at once than that limit.
     *
     * @param remainingMillis the invocation's time left (Lambda's Context)
     * @return the messages to report as batch item failures
     */
    public List<String> process(List<QueueMessage> messages, LongSupplier remainingMillis) {
        // The same message twice in one batch: one copy is enough (both would own the fetch's lease); what
        // becomes of it is reported by its id, which both share.
        Map<String, QueueMessage> byId = new LinkedHashMap<>();
        messages.forEach(message -> byId.putIfAbsent(message.messageId(), message));
        List<QueueMessage> distinct = List.copyOf(byId.values());
        List<Future<JobEnd>> ends = new ArrayList<>(distinct.size());
        Map<HandlerRef, Semaphore> fetchSlots = new ConcurrentHashMap<>();
        distinct.forEach(message -> ends.add(fetchers.submit(() -> processJob(message, fetchSlots, remainingMillis))));
        List<String> failed = new ArrayList<>();
        Map<String, List<QueueClient.VisibilityChange>> backoffs = new LinkedHashMap<>();
        for (int i = 0; i < ends.size(); i++) {
            switch (end(ends, i, distinct.get(i))) {
                case JobEnd.Done done -> { }
                case JobEnd.Again again -> failed.add(again.messageId());
                case JobEnd.BackOff backOff -> {
                    failed.add(backOff.messageId());
                    backoffs.computeIfAbsent(backOff.queueUrl(), q -> new ArrayList<>()).add(backOff.change());
                }
            }
        }
        backoffs.forEach(this::backOff);
        return failed;
    }

    /** Job {@code i}'s end; should waiting for it be interrupted, its message comes back. */
    private static JobEnd end(List<Future<JobEnd>> ends, int i, QueueMessage message) {
        try {
            return ends.get(i).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new JobEnd.Again(message.messageId());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                // The invocation fails; the other jobs must not go on fetching into the next one.
                ends.forEach(other -> other.cancel(true));
                throw error;
            }
            LOG.error("run job failed, will retry", "messageId", message.messageId(), "error", e.getCause());
            return new JobEnd.Again(message.messageId());
        }
    }

    private JobEnd processJob(QueueMessage message, Map<HandlerRef, Semaphore> fetchSlots, LongSupplier remainingMillis) {
        RunJob job;
        try {
            job = RunJob.fromJson(Json.parse(message.body()));
        } catch (Json.InvalidJsonException e) {
            deadLetters.keep(List.of(new DeadLetterStore.DeadLetter(message.sourceQueue(), "unreadable run job: " + e.getMessage(),
                    message.body(), Map.of("messageId", message.messageId()))));
            return new JobEnd.Done();
        }
        try {
            return fetchJob(job, message, fetchSlots, remainingMillis);
        } catch (FetchStep.RetryableFetchFailure e) {
            int seconds = backoffSeconds(message.receiveCount());
            LOG.warn("fetch failed, will retry", "runId", job.runId(), "error", e.getMessage(), "receiveCount", message.receiveCount(),
                    "retryInS", seconds);
            return retryLater(message, job, seconds);
        } catch (RuntimeException e) {
            // One run's store or queue failure must not fail the other runs of the batch. Such a failure is usually
            // transient (a pool timeout, a failover): retried after the same backoff as a failed fetch. The run's fetch
            // lease is its message's, so the message back takes it again at once.
            int seconds = backoffSeconds(message.receiveCount());
            LOG.error("run job failed, will retry", "runId", job.runId(), "error", e, "receiveCount", message.receiveCount(),
                    "retryInS", seconds);
            return retryLater(message, job, seconds);
        }
    }

    private JobEnd fetchJob(RunJob job, QueueMessage message, Map<HandlerRef, Semaphore> fetchSlots, LongSupplier remainingMillis)
            throws FetchStep.RetryableFetchFailure {
        // A job that waited for a turn until its invocation ends would come back only after the visibility timeout.
        StoreTurns turns = storeTurns.waitingAtMost(() -> remainingMillis.getAsLong() - config.runTimeReserve().toMillis());
        // Read outside the map's lock: it may take a round trip (the type's cache).
        Optional<HandlerSpec> handler = turns.take(() -> integrations.handlerOrRefresh(job.integrationKey(), job.handlerKey()));
        int atOnce = handler.map(spec -> spec.configs().concurrency()).filter(limit -> limit > 0).orElse(Integer.MAX_VALUE);
        Semaphore slots = fetchSlots.computeIfAbsent(new HandlerRef(job.integrationKey(), job.handlerKey()), ref -> new Semaphore(atOnce));
        boolean waited = !slots.tryAcquire();
        try {
            if (waited) {
                slots.acquire();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new JobEnd.Again(message.messageId());
        }
        try {
            if (waited && remainingMillis.getAsLong() < config.runTimeReserve().toMillis()) {
                // It waited for its handler until too late in the invocation to fetch a page: received again at once.
                // (A job that never waited fetches at least one page however short the time, as a fetch always has.)
                LOG.info("run job put back", "runId", job.runId(), "why", "the invocation's time ran short while it waited for its handler");
                return retryLater(message, job, 0);
            }
            if (fetching.fetch(job, handler, message.messageId(), remainingMillis, turns) instanceof FetchStep.Fetched.ContinuesFrom(String cursor)) {
                queues.sendAll(config.queues().runs(job.trigger()),
                        List.of(OutgoingMessage.of(Json.write(job.continuingFrom(cursor).toJson()), job.tenantId())));
                LOG.info("run continues in a new message", "runId", job.runId());
            }
            return new JobEnd.Done();
        } finally {
            slots.release();
        }
    }

    /** The RunJob's message comes back after {@code seconds}, its visibility changed with the batch's others. */
    private JobEnd retryLater(QueueMessage message, RunJob job, int seconds) {
        return new JobEnd.BackOff(message.messageId(), config.queues().runs(job.trigger()),
                new QueueClient.VisibilityChange(message.receiptHandle(), seconds));
    }

    /**
     * Try n (a fetch, or the store work around it) is retried after base·2^(n−1) (RUNNER_BACKOFF_BASE_MS), at most SQS's 15 minutes, instead of
     * the queue's whole visibility timeout (720 s). The budget stays the queue's: after QueueMaxReceiveCount
     * deliveries the RunJob moves to the runs DLQ, whose consumer fails the run.
     */
    int backoffSeconds(int receiveCount) {
        return Settlement.delaySeconds(config.retry().backoff(Math.max(1, receiveCount)));
    }

    /** A change that fails is not fatal: the message then comes back after the queue's visibility timeout. */
    private void backOff(String queueUrl, List<QueueClient.VisibilityChange> changes) {
        try {
            queues.changeVisibility(queueUrl, changes);
        } catch (RuntimeException e) {
            LOG.warn("run job backoff not set; the RunJobs come back after the visibility timeout", "messages", changes.size(), "error", e);
        }
    }
}
