package dev.runner.pipeline;

import dev.runner.bulk.BulkAction;
import dev.runner.callback.HeldLeases;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.CancelStore;
import dev.runner.item.RedriveStore;
import dev.runner.pause.PauseStore;
import dev.runner.run.RunStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * What each kind of bulk action does to items, a page at a time, in the caller's transaction (BulkActions pages them
 * and records progress): a redrive puts dead items back to work and reopens their runs; a cancel ends the run's items
 * not yet called; a resume or an enable unparks. And what a page leaves to do once it has committed.
 */
public final class BulkPages {

    /**
     * What one page did: the items it sends to their tiers, the handler leases it gives back (a cancel's pending items
     * that held one), how many it did, where the next starts, whether it was the last.
     */
    record Page(List<ItemJob> toSend, List<HeldLeases.Held> toRelease, int did, BulkAction.Cursor next, boolean last) {
        Page(List<ItemJob> toSend, int did, BulkAction.Cursor next, boolean last) {
            this(toSend, List.of(), did, next, last);
        }
    }

    private final RedriveStore redrives;
    private final CancelStore cancels;
    private final RunStore runs;
    private final PauseStore pauses;
    private final HeldLeases leases;

    public BulkPages(RedriveStore redrives, CancelStore cancels, RunStore runs, PauseStore pauses, HeldLeases leases) {
        this.redrives = redrives;
        this.cancels = cancels;
        this.runs = runs;
        this.pauses = pauses;
        this.leases = leases;
    }

    /**
     * How many items {@code target} will do, counted in the asking transaction; a cancel cancels its run there first.
     * Zero or less: nothing to do (-1: a cancel of a run no longer open).
     */
    long total(Connection connection, BulkAction.Target target) throws SQLException {
        return switch (target) {
            case BulkAction.Target.Redrive r -> redrives.countDead(r.filter(), null, r.limit());
            case BulkAction.Target.Cancel c -> runs.cancel(connection, c.runId()) ? cancels.countCancellable(connection, c.runId()) : -1;
            case BulkAction.Target.Resume r -> pauses.countParked(connection, r.handler());
            case BulkAction.Target.Enable e -> pauses.countParked(connection, e.tenantId(), e.integrationKey());
        };
    }

    /** The next page of {@code action}, at most {@code size} items from its cursor. */
    Page next(Connection connection, BulkAction action, int size) throws SQLException {
        BulkAction.Cursor at = action.cursor();
        return switch (action.target()) {
            case BulkAction.Target.Redrive r -> {
                int take = (int) Math.min(size, r.limit() - action.done());
                RedriveStore.RedrivePage redriven = redrives.redrivePage(connection, r.filter(), action.askedAt(), at.at(), at.itemId(), take);
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
    }

    /** What a committed page leaves to do besides its sends: the held leases of the pending items it cancelled go back. */
    void committed(Page page) {
        leases.release(page.toRelease());
    }

    /** For a redrive capped by its limit, the dead items that match beyond it, which a later ask takes; else 0. */
    long beyondLimit(BulkAction action) {
        return action.target() instanceof BulkAction.Target.Redrive r && action.total() == r.limit()
                ? Math.max(0, redrives.countDead(r.filter(), null, Long.MAX_VALUE) + action.done() - action.total())
                : 0;
    }

    /**
     * A cancel's page: the statuses in turn (queued, retrying, parked, pending), each in id order, until a page is full.
     * A pending item's held lease is given back once the page has committed, not at its wait's end.
     */
    private Page cancelPage(Connection connection, BulkAction.Target.Cancel cancel, BulkAction.Cursor at, int size) throws SQLException {
        List<ItemStatus> statuses = CancelStore.CANCELLABLE;
        int from = at.status() == null ? 0 : statuses.indexOf(ItemStatus.fromWire(at.status()));
        UUID after = at.itemId();
        int did = 0;
        List<HeldLeases.Held> held = new ArrayList<>();
        for (int i = from; i < statuses.size(); i++) {
            List<CancelStore.Cancelled> ended = cancels.cancelPage(connection, cancel.runId(), statuses.get(i), after, size - did);
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
}
