package dev.runner.pipeline;

import dev.runner.bulk.BulkAction;
import dev.runner.callback.HeldLeases;
import dev.runner.bulk.BulkActionStore;
import dev.runner.config.RunnerConfig;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.pause.PauseStore;
import dev.runner.run.RunStore;
import dev.runner.store.Ids;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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

    /**
     * What one page did: the items it sends to their tiers, the handler leases it gives back (a cancel's pending items
     * that held one), how many it did, where the next starts, whether it was the last.
     */
    private record Page(List<ItemJob> toSend, List<HeldLeases.Held> toRelease, int did, BulkAction.Cursor next, boolean last) {
        Page(List<ItemJob> toSend, int did, BulkAction.Cursor next, boolean last) {
            this(toSend, List.of(), did, next, last);
        }
    }

    /** A page as committed: its action afterwards, and the items it sends. */
    private record Paged(BulkAction action, Page page) {}

    private final BulkActionStore actions;
    private final ItemStore items;
    private final RunStore runs;
    private final PauseStore pauses;
    private final ItemDispatcher dispatcher;
    private final HeldLeases leases;
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

    public BulkActions(BulkActionStore actions, ItemStore items, RunStore runs, PauseStore pauses, ItemDispatcher dispatcher,
                       HeldLeases leases, Settings settings) {
        this.actions = actions;
        this.items = items;
        this.runs = runs;
        this.pauses = pauses;
        this.dispatcher = dispatcher;
        this.leases = leases;
        this.settings = settings;
    }

    /**
     * Asks for {@code target}, on behalf of {@code tenantId} (null: across tenants): records the action with what it
     * will do, or finds the one already running for the same target, and does a page of it. Nothing is recorded when
     * there is nothing to do. A cancel cancels its run in the same transaction, and nothing else when the run was not
     * open (then the answer is {@link Asked#NOTHING}).
     */
    public Asked ask(BulkAction.Target target, String tenantId) {
        Paged paged = dispatcher.commitThenSend(connection -> {
            long total = switch (target) {
                case BulkAction.Target.Redrive r -> items.countDead(r.filter(), null, r.limit());
                case BulkAction.Target.Cancel c -> runs.cancel(connection, c.runId()) ? items.countCancellable(connection, c.runId()) : -1;
                case BulkAction.Target.Resume r -> pauses.countParked(connection, r.handler());
                case BulkAction.Target.Enable e -> pauses.countParked(connection, e.tenantId(), e.integrationKey());
            };
            if (total <= 0) {
                return null;
            }
            BulkAction action = actions.open(connection, Ids.next(settings.clock()), target, tenantId, total).action();
            return page(connection, action);
        }, done -> done == null ? List.of() : done.page().toSend());
        if (paged != null) {
            leases.release(paged.page().toRelease());
        }
        if (target instanceof BulkAction.Target.Cancel cancel) {
            // The run's future tenant-window slots go back at once, so the tenant's next run starts at the
            // window's pace, not behind slots no item of this run will use.
            runs.find(cancel.runId()).ifPresent(run -> dispatcher.cancelled(run.tenantId(), run.runId()));
        }
        if (paged == null) {
            return Asked.NOTHING;
        }
        log(paged, "bulk action asked");
        long beyond = target instanceof BulkAction.Target.Redrive r && paged.action().total() == r.limit()
                ? items.countDead(r.filter(), null, Long.MAX_VALUE) + paged.action().done() - paged.action().total()
                : 0;
        return new Asked(Optional.of(paged.action()), paged.page().did(),
                paged.page().toSend().stream().map(ItemJob::runId).collect(Collectors.toSet()), Math.max(0, beyond));
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
            leases.release(paged.page().toRelease());
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
            return new Paged(action, new Page(List.of(), 0, action.cursor(), true));
        }
        int size = settings.pageSize();
        BulkAction.Cursor at = action.cursor();
        Page page = switch (action.target()) {
            case BulkAction.Target.Redrive r -> {
                int take = (int) Math.min(size, r.limit() - action.done());
                ItemStore.RedrivePage redriven = items.redrivePage(connection, r.filter(), action.askedAt(), at.at(), at.itemId(), take);
                runs.reopen(connection, redriven.jobs().stream().map(ItemJob::runId).collect(Collectors.toSet()));
                boolean last = redriven.jobs().size() < take || action.done() + redriven.jobs().size() >= r.limit();
                yield new Page(redriven.jobs(), redriven.jobs().size(),
                        redriven.lastItemId() == null ? at : new BulkAction.Cursor(redriven.lastItemId(), redriven.lastDlqAt(), null), last);
            }
            case BulkAction.Target.Cancel c -> cancelPage(connection, c, at, size);
            case BulkAction.Target.Resume r -> unparked(pauses.unparkPage(connection, r.handler(), at.itemId(), size), at, size);
            case BulkAction.Target.Enable e -> unparked(pauses.unparkTenantPage(connection, e.tenantId(), e.integrationKey(), at.itemId(), size),
                    at, size);
        };
        return new Paged(actions.advance(connection, action.actionId(), page.did(), page.next(), page.last()), page);
    }

    /**
     * A cancel's page: the statuses in turn (queued, retrying, parked, pending), each in id order, until a page is full.
     * A pending item's held lease is given back once the page has committed, not at its wait's end.
     */
    private Page cancelPage(Connection connection, BulkAction.Target.Cancel cancel, BulkAction.Cursor at, int size) throws SQLException {
        List<ItemStatus> statuses = ItemStore.CANCELLABLE;
        int from = at.status() == null ? 0 : statuses.indexOf(ItemStatus.fromWire(at.status()));
        UUID after = at.itemId();
        int did = 0;
        List<HeldLeases.Held> held = new ArrayList<>();
        for (int i = from; i < statuses.size(); i++) {
            List<ItemStore.Cancelled> ended = items.cancelPage(connection, cancel.runId(), statuses.get(i), after, size - did);
            ended.stream().filter(item -> item.heldLease() != null)
                    .forEach(item -> held.add(new HeldLeases.Held(item.integrationKey(), item.handlerKey(), item.heldLease())));
            did += ended.size();
            if (did == size) {
                return new Page(List.of(), held, did, new BulkAction.Cursor(ended.getLast().itemId(), null, statuses.get(i).wireName()), false);
            }
            after = null;
        }
        return new Page(List.of(), held, did, at, true);
    }

    private static Page unparked(PauseStore.UnparkPage unparked, BulkAction.Cursor at, int size) {
        return new Page(unparked.jobs(), unparked.jobs().size(),
                unparked.last() == null ? at : new BulkAction.Cursor(unparked.last(), null, null), unparked.looked() < size);
    }

    private static void log(Paged paged, String message) {
        BulkAction action = paged.action();
        LOG.info(message, "actionId", action.actionId(), "kind", action.kind(), "tenantId", action.tenantId(), "total", action.total(),
                "done", action.done(), "status", action.status().wireName());
    }
}
