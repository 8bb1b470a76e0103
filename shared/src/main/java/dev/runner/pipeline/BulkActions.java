package dev.runner.pipeline;

import dev.runner.bulk.BulkAction;
import dev.runner.bulk.BulkActionStore;
import dev.runner.config.RunnerConfig;
import dev.runner.item.ItemJob;
import dev.runner.log.Log;
import dev.runner.store.Ids;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Redrives, cancels, resumes and enables over any number of items, a page at a time (docs/management-api.md, bulk
 * actions). Asked for, an action is recorded with what it will do and its first page is done at once, so a small one
 * is done when the answer comes; the scheduler's tick does the pages left ({@link #continueRunning}) within its budget,
 * the action paged longest ago first. Each page is one transaction: the items it changes, their runs reopened, the
 * messages it owes (the outbox: sent after the commit, by the sweep if that send fails) and the action's progress
 * commit together, so a crash mid-page loses nothing and repeats nothing, and a page starts where the last committed
 * one ended. A page locks its action first (SKIP LOCKED): overlapping ticks, or a tick and the request, never page
 * one action twice at once.
 */
public final class BulkActions {

    private static final Log LOG = Log.of(BulkActions.class);
    /** Finished actions forgotten per tick. */
    private static final int MAX_FORGOTTEN = 1_000;

    /**
     * What an ask came to: the action (empty when there was nothing to do), what its first page did and the runs it
     * touched, and for a redrive capped by its limit, the matching items beyond it (a later ask takes them).
     */
    public record Asked(Optional<BulkAction> action, int firstPage, Set<UUID> runs, long beyondLimit) {
        public static final Asked NOTHING = new Asked(Optional.empty(), 0, Set.of(), 0);
    }

    /** A page as committed: its action afterwards, and the items it sends. */
    private record Paged(BulkAction action, BulkPages.Page page) {}

    private final BulkActionStore actions;
    private final BulkPages pages;
    private final ItemDispatcher dispatcher;
    private final Settings settings;

    /**
     * @param pageSize  items per page
     * @param budget    how much of a tick its pages may take
     * @param retention how long a finished action stays readable
     * @param clock     wall time, which the budget is spent in, whatever clock the root runs on
     */
    public record Settings(int pageSize, Duration budget, Duration retention, Clock clock) {
        public static Settings of(RunnerConfig config, Clock clock) {
            return new Settings(config.sweeps().bulkPageSize(), config.sweeps().bulkBudget(), config.retention().runs(), clock);
        }
    }

    public BulkActions(BulkActionStore actions, BulkPages pages, ItemDispatcher dispatcher, Settings settings) {
        this.actions = actions;
        this.pages = pages;
        this.dispatcher = dispatcher;
        this.settings = settings;
    }

    /**
     * Asks for {@code target}, on behalf of {@code tenantId} (null: across tenants): records the action with what it
     * will do, or finds the one already running for the same target, and does a page of it. Nothing is recorded when
     * there is nothing to do. A cancel is asked for on behalf of its run's tenant; it cancels its run in the same
     * transaction, and nothing else when the run was not open (then the answer is {@link Asked#NOTHING}).
     */
    public Asked ask(BulkAction.Target target, String tenantId) {
        if (target instanceof BulkAction.Target.Cancel && tenantId == null) {
            throw new IllegalArgumentException("a cancel is asked for on behalf of its run's tenant");
        }
        Paged paged = dispatcher.commitThenSend(connection -> {
            long total = pages.total(connection, target);
            if (total <= 0) {
                return null;
            }
            BulkAction action = actions.open(connection, Ids.next(settings.clock()), target, tenantId, total).action();
            return page(connection, action);
        }, done -> done == null ? List.of() : done.page().toSend());
        if (paged != null) {
            pages.committed(paged.page());
        }
        if (target instanceof BulkAction.Target.Cancel cancel) {
            // The run's future tenant-window slots go back at once, so the tenant's next run starts at the
            // window's pace, not behind slots no item of this run will use.
            dispatcher.cancelled(tenantId, cancel.runId());
        }
        if (paged == null) {
            return Asked.NOTHING;
        }
        log(paged, "bulk action asked");
        return new Asked(Optional.of(paged.action()), paged.page().did(),
                paged.page().toSend().stream().map(ItemJob::runId).collect(Collectors.toSet()), pages.beyondLimit(paged.action()));
    }

    /**
     * The scheduler's part: pages of running actions, the one paged longest ago first, until none is left or the budget
     * is spent; then finished actions past their retention are forgotten. Returns the items done.
     */
    public long continueRunning() {
        Instant stop = settings.clock().instant().plus(settings.budget());
        long did = 0;
        while (settings.clock().instant().isBefore(stop)) {
            Paged paged = dispatcher.commitThenSend(connection -> {
                Optional<BulkAction> next = actions.lockNext(connection);
                return next.isEmpty() ? null : page(connection, next.get());
            }, done -> done == null ? List.of() : done.page().toSend());
            if (paged == null) {
                break;
            }
            pages.committed(paged.page());
            did += paged.page().did();
            if (paged.action().status() == BulkAction.Status.DONE) {
                log(paged, "bulk action done");
            }
        }
        actions.forget(settings.retention(), MAX_FORGOTTEN);
        return did;
    }

    public Optional<BulkAction> find(UUID actionId) {
        return actions.find(actionId);
    }

    public List<BulkAction> page(String tenantId, BulkActionStore.Position before, int limit) {
        return actions.page(tenantId, before, limit);
    }

    /** One page of {@code action}, locked by the caller's transaction, and its progress recorded. */
    private Paged page(Connection connection, BulkAction action) throws SQLException {
        if (action.status() != BulkAction.Status.RUNNING) {
            return new Paged(action, new BulkPages.Page(List.of(), 0, action.cursor(), true));
        }
        BulkPages.Page page = pages.next(connection, action, settings.pageSize());
        return new Paged(actions.advance(connection, action.actionId(), page.did(), page.next(), page.last()), page);
    }

    private static void log(Paged paged, String message) {
        BulkAction action = paged.action();
        LOG.info(message, "actionId", action.actionId(), "kind", action.kind(), "tenantId", action.tenantId(), "total", action.total(),
                "done", action.done(), "status", action.status().wireName());
    }
}
