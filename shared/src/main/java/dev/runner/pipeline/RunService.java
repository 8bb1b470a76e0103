package dev.runner.pipeline;

import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemStore;
import dev.runner.run.RunJob;
import dev.runner.run.RunRequestStore;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Starts runs: those that fetch (manual, schedule) are stored queued and their RunJob sent to the
 * runs tier; those whose items arrive with them (webhook, ingest) are stored running with their
 * items and the items sent to the items tier. Either way: commit first, with the record of the
 * messages owed (OutboxStore), then send, so a message never names a row that does not exist; a
 * send lost after the commit is sent by the scheduler's sweep, and the request is still accepted
 * (RunDispatcher, and DeliveredRuns for runs with items). Lookups (types, tenant integrations)
 * happen before a transaction opens: no code path holds a pooled connection while it waits for another.
 */
public final class RunService {


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

    private final Integrations integrations;
    private final RunStore runs;
    private final RunRequestStore requests;
    private final RunDispatcher dispatcher;
    private final DeliveredRuns delivered;
    private final Clock clock;

    public RunService(Integrations integrations, RunStore runs, RunRequestStore requests, RunDispatcher dispatcher,
                      DeliveredRuns delivered, Clock clock) {
        this.integrations = integrations;
        this.runs = runs;
        this.requests = requests;
        this.dispatcher = dispatcher;
        this.delivered = delivered;
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
        return dispatcher.commitThenSend(connection -> {
            if (idempotencyKey != null) {
                switch (requests.claim(connection, request.tenantId(), idempotencyKey, fingerprint, job.runId())) {
                    case RunRequestStore.Claim.Replay replay -> {
                        return new Accepted(replay.runId(), true);
                    }
                    case RunRequestStore.Claim.Conflict conflict -> throw new RunRefused(RunRefused.Reason.IDEMPOTENCY_KEY_REUSED,
                            "this Idempotency-Key was used within the last " + requests.window().toHours()
                                    + " hours for another request (run " + conflict.runId() + "); use a new key for a new request");
                    case RunRequestStore.Claim.Fresh fresh -> { }
                }
            }
            insertQueued(connection, job, null);
            return new Accepted(job.runId(), false);
        }, accepted -> accepted.replayed() ? List.of() : List.of(job));
    }

    /** Stores a prepared run queued inside the caller's transaction; false when its fire key already made one. */
    public boolean insertQueued(Connection connection, RunJob job, String scheduleFireKey) throws SQLException {
        return runs.insert(connection, job, RunStatus.QUEUED, scheduleFireKey);
    }

    /** A run whose items came with it (webhook, ingest), stored and its items sent as {@link DeliveredRuns#start} says. */
    public Started startWithItems(String tenantId, String integrationKey, HandlerSpec handler, Trigger trigger,
                                  List<ItemStore.NewItem> newItems, Keep fresh) {
        return delivered.start(tenantId, integrationKey, handler, trigger, newItems, fresh);
    }

    /** Chooses, inside the run's transaction, which items to store; {@code runId} is the run they would make. */
    @FunctionalInterface
    public interface Keep {
        List<ItemStore.NewItem> keep(Connection connection, UUID runId, List<ItemStore.NewItem> items) throws SQLException;

        Keep ALL = (connection, runId, items) -> items;
    }
}
