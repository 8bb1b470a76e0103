package dev.runner.pipeline;

import dev.runner.item.ItemJob;
import dev.runner.item.RedriveStore;
import dev.runner.log.Log;
import dev.runner.run.RunStore;

import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Puts one dead item back to work with fresh attempts (its history kept): the item and its run's reopening commit
 * together, then it enters its tier through the dispatcher, paced by its tenant's window. Redrives of many items (a
 * run's, or every match of a filter) are bulk actions, a page at a time (BulkActions).
 */
public final class RedriveService {

    private static final Log LOG = Log.of(RedriveService.class);

    private final RedriveStore items;
    private final RunStore runs;
    private final ItemDispatcher dispatcher;

    public RedriveService(RedriveStore items, RunStore runs, ItemDispatcher dispatcher) {
        this.items = items;
        this.runs = runs;
        this.dispatcher = dispatcher;
    }

    /** One item, if it is dead; returns 1 or 0. */
    public int redriveItem(UUID itemId) {
        List<ItemJob> redriven = dispatcher.commitThenSend(connection -> {
            List<ItemJob> jobs = items.redriveItem(connection, itemId);
            Set<UUID> runIds = jobs.stream().map(ItemJob::runId).collect(Collectors.toSet());
            runs.reopen(connection, runIds);
            return jobs;
        }, jobs -> jobs);
        LOG.info("item redriven", "itemId", itemId, "items", redriven.size());
        return redriven.size();
    }
}
