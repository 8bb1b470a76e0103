package dev.runner.run;

import dev.runner.config.RunnerConfig;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemDispatcher;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.store.Database;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Starts runs: those that fetch (manual, schedule) are stored queued and their RunJob sent to the
 * runs tier; those whose items arrive with them (webhook, ingest) are stored running with their
 * items and the items sent to the items tier. Either way: commit first, then send, so a message
 * never names a row that does not exist; a send lost after the commit is re-sent by the
 * scheduler's sweeps of runs and items left queued.
 */
public final class RunService {

    /** Why a run cannot start, with the HTTP status the API answers: 404 (missing) or 409 (disabled). */
    public static final class RunRefused extends RuntimeException {
        private final int status;

        public RunRefused(int status, String message) {
            super(message);
            this.status = status;
        }

        public int status() {
            return status;
        }
    }

    /** A run to start: what the scheduler asks for. */
    public record Request(String tenantId, String integrationKey, String handlerKey, Trigger trigger, String scheduleFireKey) {}

    /** A run started with its items: how many were new. */
    public record Started(UUID runId, int accepted, int enqueued) {}

    private final RunnerConfig config;
    private final Database db;
    private final RunStore runs;
    private final ItemStore items;
    private final Integrations integrations;
    private final QueueClient queues;
    private final ItemDispatcher dispatcher;
    private final Clock clock;

    public RunService(RunnerConfig config, Database db, RunStore runs, ItemStore items, Integrations integrations,
                      QueueClient queues, ItemDispatcher dispatcher, Clock clock) {
        this.config = config;
        this.db = db;
        this.runs = runs;
        this.items = items;
        this.integrations = integrations;
        this.queues = queues;
        this.dispatcher = dispatcher;
        this.clock = clock;
    }

    /** The handler of an enabled tenant integration, or {@link RunRefused} saying which part is missing. */
    public HandlerSpec requireHandler(String tenantId, String integrationKey, String handlerKey) {
        Optional<TenantIntegration> tenant = integrations.tenantIntegration(tenantId, integrationKey);
        if (tenant.isEmpty()) {
            throw new RunRefused(404, "tenant " + tenantId + " has no integration " + integrationKey);
        }
        if (!tenant.get().enabled()) {
            throw new RunRefused(409, "integration " + integrationKey + " is disabled for tenant " + tenantId);
        }
        return integrations.handler(integrationKey, handlerKey)
                .orElseThrow(() -> new RunRefused(404, "integration " + integrationKey + " has no handler " + handlerKey));
    }

    /** A run that fetches its items (manual or schedule). */
    public UUID startFetching(String tenantId, String integrationKey, String handlerKey, Trigger trigger) {
        return startFetching(List.of(new Request(tenantId, integrationKey, handlerKey, trigger, null))).getFirst();
    }

    /**
     * Many fetching runs in one transaction, then one send per tier. A request whose
     * scheduleFireKey already made a run is skipped: a schedule fires once per due time.
     * Returns the ids of the runs created.
     */
    public List<UUID> startFetching(List<Request> requests) {
        List<RunJob> created = db.inTransaction(connection -> insertFetching(connection, requests));
        enqueue(created);
        return created.stream().map(RunJob::runId).toList();
    }

    /** Stores queued runs inside the caller's transaction; the caller sends them with {@link #enqueue} after commit. */
    public List<RunJob> insertFetching(java.sql.Connection connection, List<Request> requests) throws java.sql.SQLException {
        List<RunJob> inserted = new ArrayList<>();
        for (Request request : requests) {
            HandlerSpec handler = requireHandler(request.tenantId(), request.integrationKey(), request.handlerKey());
            RunJob job = new RunJob(Ids.next(clock), request.tenantId(), request.integrationKey(), request.handlerKey(),
                    handler.direction(), request.trigger(), null);
            if (runs.insert(connection, job, RunStatus.QUEUED, request.scheduleFireKey())) {
                inserted.add(job);
            }
        }
        return inserted;
    }

    /** Sends RunJobs to their tiers (also the sweep's re-send of runs still queued). */
    public void enqueue(List<RunJob> jobs) {
        for (Trigger trigger : List.of(Trigger.MANUAL, Trigger.SCHEDULE)) {
            List<OutgoingMessage> messages = jobs.stream().filter(job -> job.trigger() == trigger)
                    .map(job -> OutgoingMessage.of(Json.write(job.toJson()), job.tenantId())).toList();
            queues.sendAll(config.queues().runs(trigger), messages);
        }
    }

    /**
     * A run whose items came with it (webhook, ingest): run and items in one transaction, then the
     * items sent to the trigger's tier. {@code fresh} filters out items already seen (webhook dedup)
     * inside the same transaction.
     */
    public Started startWithItems(String tenantId, String integrationKey, HandlerSpec handler, Trigger trigger,
                                  List<ItemStore.NewItem> newItems, ItemFilter fresh) {
        RunJob run = new RunJob(Ids.next(clock), tenantId, integrationKey, handler.handlerKey(), handler.direction(), trigger, null);
        List<ItemJob> created = db.inTransaction(connection -> {
            runs.insert(connection, run, RunStatus.RUNNING, null);
            return items.insert(connection, run, fresh.keep(connection, newItems));
        });
        dispatcher.dispatch(created);
        if (created.isEmpty()) {
            runs.completeIfDone(List.of(run.runId()));
        }
        return new Started(run.runId(), newItems.size(), created.size());
    }

    /** Chooses, inside the run's transaction, which items to store. */
    @FunctionalInterface
    public interface ItemFilter {
        List<ItemStore.NewItem> keep(java.sql.Connection connection, List<ItemStore.NewItem> items) throws java.sql.SQLException;

        ItemFilter ALL = (connection, items) -> items;
    }
}
