package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.handler.HandlerClient;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunJob;
import dev.runner.run.RunStore;

import java.time.Duration;
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
 * Fetches a run's items from its handler page by page and fans them out onto the items tier of
 * the run's trigger. Each page: one insert (idempotent), the SendMessageBatch calls, one cursor
 * update, in that order, so a redelivered RunJob resumes at the first page whose items may not
 * all have been sent. When the invocation's time runs short it goes on in a new message.
 */
public final class RunWorker {

    private static final Log LOG = Log.of(RunWorker.class);
    /** Items one page may carry (docs/handler-contract.md). */
    static final int MAX_PAGE_ITEMS = 1_000;
    private static final Duration LEASE_MARGIN = Duration.ofSeconds(30);

    private final RunnerConfig config;
    private final RunStore runs;
    private final ItemStore items;
    private final Integrations integrations;
    private final HandlerClient handlers;
    private final QueueClient queues;
    private final DeadLetterStore deadLetters;
    private final ItemDispatcher dispatcher;
    private final ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();

    public RunWorker(RunnerConfig config, RunStore runs, ItemStore items, Integrations integrations,
                     HandlerClient handlers, QueueClient queues, DeadLetterStore deadLetters, ItemDispatcher dispatcher) {
        this.config = config;
        this.runs = runs;
        this.items = items;
        this.integrations = integrations;
        this.handlers = handlers;
        this.queues = queues;
        this.deadLetters = deadLetters;
        this.dispatcher = dispatcher;
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
        // Read outside the map's lock: it may take a round trip (the type's cache).
        Optional<HandlerSpec> handler = integrations.handlerOrRefresh(job.integrationKey(), job.handlerKey());
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
                return new JobEnd.BackOff(message.messageId(), config.queues().runs(job.trigger()),
                        new QueueClient.VisibilityChange(message.receiptHandle(), 0));
            }
            fetch(job, handler, message.messageId(), remainingMillis);
            return new JobEnd.Done();
        } catch (RetryableFetchFailure e) {
            int seconds = backoffSeconds(message.receiveCount());
            LOG.warn("fetch failed, will retry", "runId", job.runId(), "error", e.getMessage(), "receiveCount", message.receiveCount(),
                    "retryInS", seconds);
            return new JobEnd.BackOff(message.messageId(), config.queues().runs(job.trigger()),
                    new QueueClient.VisibilityChange(message.receiptHandle(), seconds));
        } catch (Json.InvalidJsonException e) {
            // The handler's page cannot be stored as it is: asking again gives the same page.
            runs.fail(job.runId(), "fetch: " + e.getMessage());
            LOG.warn("run failed", "runId", job.runId(), "error", e.getMessage());
            return new JobEnd.Done();
        } catch (RuntimeException e) {
            // One run's store or queue failure must not fail the other runs of the batch.
            LOG.error("run job failed, will retry", "runId", job.runId(), "error", e);
            return new JobEnd.Again(message.messageId());
        } finally {
            slots.release();
        }
    }

    /**
     * Fetch n is retried after base·2^(n−1) (RUNNER_BACKOFF_BASE_MS), at most SQS's 15 minutes, instead of
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
            LOG.warn("fetch backoff not set; the RunJobs come back after the visibility timeout", "messages", changes.size(), "error", e);
        }
    }

    private void fetch(RunJob job, Optional<HandlerSpec> handler, String owner, LongSupplier remainingMillis) throws RetryableFetchFailure {
        // The lease outlives this invocation: a duplicate RunJob cannot take the fetch while this one may still run.
        Duration lease = Duration.ofMillis(remainingMillis.getAsLong()).plus(LEASE_MARGIN);
        Optional<RunStore.FetchState> state = runs.startFetching(job.runId(), owner, lease);
        if (state.isEmpty()) {
            LOG.info("run job ignored", "runId", job.runId(), "why", "run is past fetching or another worker fetches it");
            return;
        }
        Optional<TenantIntegration> tenant = integrations.tenantIntegration(job.tenantId(), job.integrationKey());
        if (handler.isEmpty() || tenant.isEmpty() || !tenant.get().enabled()) {
            String why = handler.isEmpty() ? "unknown handler " + job.integrationKey() + "/" + job.handlerKey()
                    : "tenant integration " + job.tenantId() + "/" + job.integrationKey() + " is missing or disabled";
            runs.fail(job.runId(), why);
            LOG.warn("run failed", "runId", job.runId(), "error", why);
            return;
        }
        String cursor = state.get().pagesFetched() > 0 ? state.get().cursor() : job.cursor();
        long reserve = config.runTimeReserve().toMillis();
        while (true) {
            HandlerClient.Page page;
            try {
                // Bounded by the invocation too, less what storing and sending the page needs (at least 1 s, as the item worker).
                page = handlers.fetch(job.integrationKey(), handler.get(), fetchRequest(job, cursor, tenant.get()),
                        Duration.ofMillis(Math.max(1_000, remainingMillis.getAsLong() - reserve)));
            } catch (HandlerClient.HandlerCallException e) {
                if (e.failure().retryable()) {
                    throw new RetryableFetchFailure(e.getMessage());
                }
                runs.fail(job.runId(), "fetch: " + e.getMessage());
                LOG.warn("run failed", "runId", job.runId(), "error", e.getMessage());
                return;
            }
            if (page.items().size() > MAX_PAGE_ITEMS) {
                // A page this big would not fit one invocation's time and memory budget; asking again gives the same page.
                runs.fail(job.runId(), "fetch: a page of " + page.items().size() + " items; the limit is " + MAX_PAGE_ITEMS
                        + " per page (docs/handler-contract.md)");
                LOG.warn("run failed", "runId", job.runId(), "error", "page too large", "items", page.items().size());
                return;
            }
            List<ItemStore.NewItem> fetched = page.items().stream()
                    .map(item -> new ItemStore.NewItem(item.externalId(), item.payload())).toList();
            List<ItemJob> toSend = items.insert(job.ref(), fetched);
            dispatcher.dispatch(toSend);
            if (!runs.saveCursor(job.runId(), page.nextCursor())) {
                // Cancelled while this page was fetched: no further page; what this one stored is dropped at its claim.
                LOG.info("fetch stopped", "runId", job.runId(), "why", "the run is no longer fetching");
                return;
            }
            if (page.nextCursor() == null) {
                runs.finishFetching(job.runId());
                runs.completeIfDone(List.of(job.runId()));
                LOG.info("run fetched", "runId", job.runId());
                return;
            }
            cursor = page.nextCursor();
            if (remainingMillis.getAsLong() < reserve) {
                runs.releaseFetch(job.runId(), owner);
                queues.sendAll(config.queues().runs(job.trigger()),
                        List.of(OutgoingMessage.of(Json.write(job.continuingFrom(cursor).toJson()), job.tenantId())));
                LOG.info("run continues in a new message", "runId", job.runId());
                return;
            }
        }
    }

    static ObjectNode fetchRequest(RunJob job, String cursor, TenantIntegration tenant) {
        ObjectNode request = Json.object();
        request.put("runId", job.runId().toString());
        request.put("tenantId", job.tenantId());
        request.put("integrationKey", job.integrationKey());
        request.put("handlerKey", job.handlerKey());
        request.put("direction", job.direction().wireName());
        request.put("trigger", job.trigger().wireName());
        request.put("cursor", cursor);
        request.set("settings", tenant.settings());
        return request;
    }

    private static final class RetryableFetchFailure extends Exception {
        RetryableFetchFailure(String message) {
            super(message);
        }
    }
}
