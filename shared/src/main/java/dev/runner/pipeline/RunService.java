package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.outbox.OutboxStore;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunJob;
import dev.runner.run.RunRequestStore;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Database;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Starts runs: those that fetch (manual, schedule) are stored queued and their RunJob sent to the
 * runs tier; those whose items arrive with them (webhook, ingest) are stored running with their
 * items and the items sent to the items tier. Either way: commit first, with the record of the
 * messages owed (OutboxStore), then send, so a message never names a row that does not exist; a
 * send lost after the commit is sent by the scheduler's sweep, and the request is still accepted. Lookups (types, tenant integrations) happen before a transaction opens:
 * no code path holds a pooled connection while it waits for another.
 */
public final class RunService {

    private static final Log LOG = Log.of(RunService.class);

    /** Why a run cannot start. */
    public static final class RunRefused extends RuntimeException {

        public enum Reason { NO_TENANT_INTEGRATION, DISABLED, NO_HANDLER, IDEMPOTENCY_KEY_REUSED }

        private final Reason reason;

        public RunRefused(Reason reason, String message) {
            super(message);
            this.reason = reason;
        }

        public Reason reason() {
            return reason;
        }
    }

    /** A run to start. */
    public record Request(String tenantId, String integrationKey, String handlerKey, Trigger trigger) {}

    /** A run started with its items: how many were new. {@code runId} is null when none was: then no run was made. */
    public record Started(UUID runId, int accepted, int enqueued) {}

    /** A fetching run accepted; {@code replayed}: an earlier request with the same Idempotency-Key made it. */
    public record Accepted(UUID runId, boolean replayed) {}

    private final RunnerConfig.Queues queueUrls;
    private final Database db;
    private final RunStore runs;
    private final ItemStore items;
    private final Integrations integrations;
    private final QueueClient queues;
    private final ItemDispatcher dispatcher;
    private final OutboxStore outbox;
    private final RunRequestStore requests;
    private final Duration idempotencyWindow;
    private final Clock clock;

    public RunService(RunnerConfig.Queues queueUrls, Database db, RunStore runs, ItemStore items, Integrations integrations,
                      QueueClient queues, ItemDispatcher dispatcher, OutboxStore outbox, RunRequestStore requests,
                      Duration idempotencyWindow, Clock clock) {
        this.queueUrls = queueUrls;
        this.db = db;
        this.runs = runs;
        this.items = items;
        this.integrations = integrations;
        this.queues = queues;
        this.dispatcher = dispatcher;
        this.outbox = outbox;
        this.requests = requests;
        this.idempotencyWindow = idempotencyWindow;
        this.clock = clock;
    }

    /** The handler of an enabled tenant integration, or {@link RunRefused} saying which part is missing. */
    public HandlerSpec requireHandler(String tenantId, String integrationKey, String handlerKey) {
        Optional<TenantIntegration> tenant = integrations.tenantIntegration(tenantId, integrationKey);
        if (tenant.isEmpty()) {
            throw new RunRefused(RunRefused.Reason.NO_TENANT_INTEGRATION, "tenant " + tenantId + " has no integration " + integrationKey);
        }
        if (!tenant.get().enabled()) {
            throw new RunRefused(RunRefused.Reason.DISABLED, "integration " + integrationKey + " is disabled for tenant " + tenantId);
        }
        return integrations.handler(integrationKey, handlerKey)
                .orElseThrow(() -> new RunRefused(RunRefused.Reason.NO_HANDLER, "integration " + integrationKey + " has no handler " + handlerKey));
    }

    /** The RunJob a fetching run will carry; checks the request ({@link RunRefused}) without holding a connection. */
    public RunJob prepareFetching(Request request) {
        HandlerSpec handler = requireHandler(request.tenantId(), request.integrationKey(), request.handlerKey());
        return new RunJob(Ids.next(clock), request.tenantId(), request.integrationKey(), request.handlerKey(),
                handler.direction(), request.trigger(), null);
    }

    /** A run that fetches its items (manual or schedule): stored queued, then its RunJob sent. */
    public UUID startFetching(Request request) {
        return startFetching(request, null).runId();
    }

    /**
     * A run that fetches its items, stored queued with the record that its RunJob is owed, then the
     * RunJob sent. Once committed the run is accepted whatever the send does: a failed send is left
     * to the sweep (RUNNER_SWEEP_UNSENT_S), so no client is told to retry a run that exists.
     * {@code idempotencyKey} (nullable): a key this tenant already used within the window for the
     * same request answers with that request's run and makes none; for another request it is
     * refused ({@link RunRefused.Reason#IDEMPOTENCY_KEY_REUSED}).
     */
    public Accepted startFetching(Request request, String idempotencyKey) {
        RunJob job = prepareFetching(request);
        String fingerprint = request.trigger().wireName() + "/" + request.integrationKey() + "/" + request.handlerKey();
        record Committed(Accepted accepted, OutboxStore.Owed owed) {}
        Committed committed = db.inTransaction(connection -> {
            if (idempotencyKey != null) {
                switch (requests.claim(connection, request.tenantId(), idempotencyKey, fingerprint, job.runId(), idempotencyWindow)) {
                    case RunRequestStore.Claim.Replay replay -> {
                        return new Committed(new Accepted(replay.runId(), true), OutboxStore.Owed.NONE);
                    }
                    case RunRequestStore.Claim.Conflict conflict -> throw new RunRefused(RunRefused.Reason.IDEMPOTENCY_KEY_REUSED,
                            "this Idempotency-Key was used within the last " + idempotencyWindow.toHours()
                                    + " hours for another request (run " + conflict.runId() + "); use a new key for a new request");
                    case RunRequestStore.Claim.Fresh fresh -> { }
                }
            }
            insertQueued(connection, job, null);
            return new Committed(new Accepted(job.runId(), false), outbox.owe(connection, OutboxStore.Kind.RUNS, List.of(job.runId())));
        });
        if (!committed.accepted().replayed()) {
            sendOwed(List.of(job), List.of(committed.owed()));
        }
        return committed.accepted();
    }

    /** Sends RunJobs whose messages are owed, then settles {@code owed}; false (logged) when the send failed and they stay owed (not granted: thrown). */
    public boolean sendOwed(List<RunJob> jobs, List<OutboxStore.Owed> owed) {
        try {
            enqueue(jobs);
        } catch (QueueClient.NotGranted e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("RunJob send after commit failed; the sweep sends it", "runs", jobs.size(), "error", e);
            return false;
        }
        ItemDispatcher.settle(outbox, owed);
        return true;
    }

    /** Stores a prepared run queued inside the caller's transaction; false when its fire key already made one. */
    public boolean insertQueued(Connection connection, RunJob job, String scheduleFireKey) throws SQLException {
        return runs.insert(connection, job, RunStatus.QUEUED, scheduleFireKey);
    }

    /** Sends RunJobs to their tiers (also the sweep's re-send of runs still queued). */
    public void enqueue(List<RunJob> jobs) {
        for (Trigger trigger : List.of(Trigger.MANUAL, Trigger.SCHEDULE)) {
            List<OutgoingMessage> messages = jobs.stream().filter(job -> job.trigger() == trigger)
                    .map(job -> OutgoingMessage.of(Json.write(job.toJson()), job.tenantId())).toList();
            queues.sendAll(queueUrls.runs(trigger), messages);
        }
    }

    /**
     * A run whose items came with it (webhook, ingest): run and items in one transaction, then the
     * items sent to the trigger's tier. {@code fresh} filters out what was already seen (deliveries,
     * items) inside the same transaction; when nothing is left, no run is made at all, so a repeated
     * delivery leaves no trace but its dedup rows.
     */
    public Started startWithItems(String tenantId, String integrationKey, HandlerSpec handler, Trigger trigger,
                                  List<ItemStore.NewItem> newItems, Keep fresh) {
        RunJob run = new RunJob(Ids.next(clock), tenantId, integrationKey, handler.handlerKey(), handler.direction(), trigger, null);
        Optional<List<ItemJob>> created = dispatcher.commitThenSend(connection -> {
            List<ItemStore.NewItem> kept = fresh.keep(connection, run.runId(), newItems);
            if (kept.isEmpty() && !newItems.isEmpty()) {
                return Optional.empty();
            }
            runs.insert(connection, run, RunStatus.RUNNING, null);
            return Optional.of(items.insert(connection, run.ref(), kept));
        }, made -> made.orElse(List.of()));
        if (created.isEmpty()) {
            return new Started(null, newItems.size(), 0);
        }
        if (created.get().isEmpty()) {
            runs.completeIfDone(List.of(run.runId()));
        }
        return new Started(run.runId(), newItems.size(), created.get().size());
    }

    /** Chooses, inside the run's transaction, which items to store; {@code runId} is the run they would make. */
    @FunctionalInterface
    public interface Keep {
        List<ItemStore.NewItem> keep(Connection connection, UUID runId, List<ItemStore.NewItem> items) throws SQLException;

        Keep ALL = (connection, runId, items) -> items;
    }
}
