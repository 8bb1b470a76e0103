package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.handler.HandlerClient;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.run.RunJob;
import dev.runner.run.RunStore;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The run worker's fetching step: one RunJob's pages from its handler, each stored (one insert,
 * idempotent), fanned out onto the items tier of the run's trigger, then its cursor saved, in that
 * order, so a redelivered RunJob resumes at the first page whose items may not all have been sent.
 * When the invocation's time runs short it stops and says where the run goes on.
 */
public final class FetchStep {

    private static final Log LOG = Log.of(FetchStep.class);
    /** Items one page may carry (docs/handler-contract.md). */
    static final int MAX_PAGE_ITEMS = 1_000;
    private static final Duration LEASE_MARGIN = Duration.ofSeconds(30);

    /** How a fetch ended: over for this RunJob (fetched, failed, stopped or ignored), or to go on from a cursor in a new message. */
    sealed interface Fetched {
        record Over() implements Fetched {}

        record ContinuesFrom(String cursor) implements Fetched {}
    }

    /** The handler failed in a way a later try may not (docs/handler-contract.md): the RunJob comes back after a backoff. */
    static final class RetryableFetchFailure extends Exception {
        RetryableFetchFailure(String message) {
            super(message);
        }
    }

    private final Duration timeReserve;
    private final RunStore runs;
    private final ItemStore items;
    private final Integrations integrations;
    private final HandlerClient handlers;
    private final ItemDispatcher dispatcher;

    /** @param timeReserve the invocation's time a page's storing and sending needs (RUNNER_RUN_TIME_RESERVE_MS) */
    public FetchStep(Duration timeReserve, RunStore runs, ItemStore items, Integrations integrations, HandlerClient handlers,
                     ItemDispatcher dispatcher) {
        this.timeReserve = timeReserve;
        this.runs = runs;
        this.items = items;
        this.integrations = integrations;
        this.handlers = handlers;
        this.dispatcher = dispatcher;
    }

    /**
     * Fetches {@code job}'s pages as {@code owner} (its message), its store work in {@code turns}; a page that cannot
     * be stored as it is fails the run.
     */
    Fetched fetch(RunJob job, Optional<HandlerSpec> handler, String owner, LongSupplier remainingMillis, StoreTurns turns)
            throws RetryableFetchFailure {
        try {
            return fetchPages(job, handler, owner, remainingMillis, turns);
        } catch (Json.InvalidJsonException e) {
            // The handler's page cannot be stored as it is: asking again gives the same page.
            turns.take(() -> runs.fail(job.runId(), "fetch: " + e.getMessage()));
            LOG.warn("run failed", "runId", job.runId(), "error", e.getMessage());
            return new Fetched.Over();
        }
    }

    private Fetched fetchPages(RunJob job, Optional<HandlerSpec> handler, String owner, LongSupplier remainingMillis,
                               StoreTurns turns) throws RetryableFetchFailure {
        // The lease outlives this invocation: a duplicate RunJob cannot take the fetch while this one may still run.
        Duration lease = Duration.ofMillis(remainingMillis.getAsLong()).plus(LEASE_MARGIN);
        Optional<RunStore.FetchState> state = turns.take(() -> runs.startFetching(job.runId(), owner, lease));
        if (state.isEmpty()) {
            LOG.info("run job ignored", "runId", job.runId(), "why", "run is past fetching or another worker fetches it");
            return new Fetched.Over();
        }
        Optional<TenantIntegration> tenant = turns.take(() -> integrations.tenantIntegration(job.tenantId(), job.integrationKey()));
        if (handler.isEmpty() || tenant.isEmpty() || !tenant.get().enabled()) {
            String why = handler.isEmpty() ? "unknown handler " + job.integrationKey() + "/" + job.handlerKey()
                    : "tenant integration " + job.tenantId() + "/" + job.integrationKey() + " is missing or disabled";
            turns.take(() -> runs.fail(job.runId(), why));
            LOG.warn("run failed", "runId", job.runId(), "error", why);
            return new Fetched.Over();
        }
        String cursor = state.get().pagesFetched() > 0 ? state.get().cursor() : job.cursor();
        long reserve = timeReserve.toMillis();
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
                turns.take(() -> runs.fail(job.runId(), "fetch: " + e.getMessage()));
                LOG.warn("run failed", "runId", job.runId(), "error", e.getMessage());
                return new Fetched.Over();
            }
            if (page.items().size() > MAX_PAGE_ITEMS) {
                // A page this big would not fit one invocation's time and memory budget; asking again gives the same page.
                turns.take(() -> runs.fail(job.runId(), "fetch: a page of " + page.items().size() + " items; the limit is "
                        + MAX_PAGE_ITEMS + " per page (docs/handler-contract.md)"));
                LOG.warn("run failed", "runId", job.runId(), "error", "page too large", "items", page.items().size());
                return new Fetched.Over();
            }
            List<ItemStore.NewItem> fetched = page.items().stream()
                    .map(item -> new ItemStore.NewItem(item.externalId(), item.payload())).toList();
            boolean byRecord = handler.map(spec -> spec.configs().orderedByRecord()).orElse(false);
            List<ItemJob> toSend = turns.take(() -> items.insert(job.ref(), fetched, byRecord));
            dispatcher.dispatch(toSend);
            if (!turns.take(() -> runs.saveCursor(job.runId(), page.nextCursor()))) {
                // Cancelled while this page was fetched: no further page; what this one stored is dropped at its claim.
                LOG.info("fetch stopped", "runId", job.runId(), "why", "the run is no longer fetching");
                return new Fetched.Over();
            }
            if (page.nextCursor() == null) {
                turns.take(() -> {
                    runs.finishFetching(job.runId());
                    runs.completeIfDone(List.of(job.runId()));
                });
                LOG.info("run fetched", "runId", job.runId());
                return new Fetched.Over();
            }
            cursor = page.nextCursor();
            if (remainingMillis.getAsLong() < reserve) {
                turns.take(() -> runs.releaseFetch(job.runId(), owner));
                return new Fetched.ContinuesFrom(cursor);
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
}
