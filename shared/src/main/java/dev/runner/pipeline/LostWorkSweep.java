package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.outbox.OutboxStore;
import dev.runner.run.RunJob;
import dev.runner.run.RunStore;

import java.util.List;

/**
 * Work a lost send or a lost completion left behind, each part one step of the scheduler's sweep:
 * messages committed work still owes (OutboxStore) after RUNNER_SWEEP_UNSENT_S are sent; as a
 * backstop for a message lost any other way, runs and items whose message is long overdue are sent
 * again, only on tiers without a visible backlog (there a message may just be waiting its turn, and
 * nothing tells it from a lost one); runs whose items all ended are completed.
 */
public final class LostWorkSweep {

    private static final int MAX_OVERDUE_RUNS = 500;
    private static final int MAX_OVERDUE_ITEMS = 5_000;
    private static final int MAX_COMPLETED = 500;
    /** Owed sends taken per sweep: one per commit, each up to a page of items. */
    private static final int MAX_OWED = 100;

    /** What the owed part sent. */
    record Resent(int runs, int items) {}

    private final RunnerConfig.Sweeps settings;
    private final OutboxStore outbox;
    private final RunStore runs;
    private final ItemStore items;
    private final RunDispatcher runDispatcher;
    private final ItemDispatcher itemDispatcher;

    public LostWorkSweep(RunnerConfig.Sweeps settings, OutboxStore outbox, RunStore runs, ItemStore items, RunDispatcher runDispatcher,
                         ItemDispatcher itemDispatcher) {
        this.settings = settings;
        this.outbox = outbox;
        this.runs = runs;
        this.items = items;
        this.runDispatcher = runDispatcher;
        this.itemDispatcher = itemDispatcher;
    }

    /** Owed messages whose send failed or never ran: sent now, one batch per kind, settled once sent. */
    Resent sendOwed() {
        List<OutboxStore.Owed> overdue = outbox.overdue(settings.unsent(), MAX_OWED);
        List<OutboxStore.Owed> owedRuns = overdue.stream().filter(o -> o.kind() == OutboxStore.Kind.RUNS).toList();
        List<OutboxStore.Owed> owedItems = overdue.stream().filter(o -> o.kind() == OutboxStore.Kind.ITEMS).toList();
        List<RunJob> runJobs = runs.queued(owedRuns.stream().flatMap(o -> o.ids().stream()).toList());
        boolean runsSent = runDispatcher.sendOwed(runJobs, owedRuns);
        List<ItemJob> itemJobs = items.queued(owedItems.stream().flatMap(o -> o.ids().stream()).toList());
        boolean itemsSent = itemDispatcher.sendOwed(itemJobs, owedItems);
        return new Resent(runsSent ? runJobs.size() : 0, itemsSent ? itemJobs.size() : 0);
    }

    /** Queued runs whose RunJob is long overdue, on quiet runs tiers: sent again. Returns how many. */
    int resendOverdueRuns() {
        List<RunJob> overdue = runs.overdueQueued(settings.runsOverdue(), runDispatcher.quietTiers(), MAX_OVERDUE_RUNS);
        runDispatcher.dispatch(overdue);
        return overdue.size();
    }

    /** Items whose message is long overdue, on quiet items tiers: sent again. Returns how many. */
    int resendOverdueItems() {
        List<ItemJob> overdue = items.overdue(settings.itemsOverdue(), itemDispatcher.quietTiers(), MAX_OVERDUE_ITEMS);
        itemDispatcher.dispatch(overdue);
        return overdue.size();
    }

    /** Runs whose items all ended but whose completion was lost: completed. Returns how many. */
    int completeAbandoned() {
        return runs.completeAbandoned(settings.completionQuiet(), MAX_COMPLETED).size();
    }
}
