package dev.runner.pipeline;

import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.run.RunStore;
import dev.runner.store.Database;

import java.util.List;
import java.util.UUID;

/**
 * Puts dead items back to work with fresh attempts (their history kept): the items and the run's
 * reopening commit together, then the items enter their tiers through the dispatcher, paced by
 * their tenants' windows.
 */
public final class RedriveService {

    private static final Log LOG = Log.of(RedriveService.class);

    private final Database db;
    private final ItemStore items;
    private final RunStore runs;
    private final ItemDispatcher dispatcher;

    public RedriveService(Database db, ItemStore items, RunStore runs, ItemDispatcher dispatcher) {
        this.db = db;
        this.items = items;
        this.runs = runs;
        this.dispatcher = dispatcher;
    }

    /** The dead items of a run; returns how many went back to work. */
    public int redriveRun(UUID runId) {
        List<ItemJob> redriven = db.inTransaction(connection -> {
            List<ItemJob> jobs = items.redrive(connection, runId);
            if (!jobs.isEmpty()) {
                runs.reopen(connection, runId);
            }
            return jobs;
        });
        dispatcher.dispatch(redriven);
        LOG.info("run redriven", "runId", runId, "items", redriven.size());
        return redriven.size();
    }
}
