package dev.runner.pipeline;

import dev.runner.item.ItemFilter;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.log.Log;
import dev.runner.run.Run;
import dev.runner.run.RunStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Puts dead items back to work with fresh attempts (their history kept): the items and their
 * runs' reopening commit together, then the items enter their tiers through the dispatcher, paced
 * by their tenants' windows (a large redrive is spread at the tenant limit: docs/management-api.md, bulk redrive).
 */
public final class RedriveService {

    private static final Log LOG = Log.of(RedriveService.class);

    /**
     * What a bulk redrive did.
     *
     * @param remaining dead items still matching after this call (a later call takes them)
     */
    public record Redriven(int items, int runs, long remaining) {}

    private final ItemStore items;
    private final RunStore runs;
    private final ItemDispatcher dispatcher;

    public RedriveService(ItemStore items, RunStore runs, ItemDispatcher dispatcher) {
        this.items = items;
        this.runs = runs;
        this.dispatcher = dispatcher;
    }

    /**
     * After a run's cancel ({@code RunStore.cancel}): its items' future tenant-window slots go back
     * at once, so the tenant's next run starts at the window's pace, not behind slots no item will use.
     */
    public void cancelled(Run run) {
        dispatcher.cancelled(run.tenantId(), run.runId());
    }

    /** The dead items of a run; returns how many went back to work. */
    public int redriveRun(UUID runId) {
        List<ItemJob> redriven = dispatcher.commitThenSend(connection -> {
            List<ItemJob> jobs = items.redrive(connection, runId);
            if (!jobs.isEmpty()) {
                runs.reopen(connection, runId);
            }
            return jobs;
        }, jobs -> jobs);
        LOG.info("run redriven", "runId", runId, "items", redriven.size());
        return redriven.size();
    }

    /** One item, if it is dead; returns 1 or 0. */
    public int redriveItem(UUID itemId) {
        List<ItemJob> redriven = dispatcher.commitThenSend(connection -> reopen(connection, items.redriveItem(connection, itemId)), jobs -> jobs);
        LOG.info("item redriven", "itemId", itemId, "items", redriven.size());
        return redriven.size();
    }

    /** At most {@code limit} dead items matching {@code filter}, the oldest dead first. */
    public Redriven redriveDead(ItemFilter filter, int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit < 1: " + limit);
        }
        List<ItemJob> redriven = dispatcher.commitThenSend(connection -> reopen(connection, items.redriveDead(connection, filter, limit)),
                jobs -> jobs);
        int runCount = (int) redriven.stream().map(ItemJob::runId).distinct().count();
        long remaining = redriven.size() < limit ? 0 : items.countDead(filter);
        LOG.info("dead items redriven", "items", redriven.size(), "runs", runCount, "remaining", remaining);
        return new Redriven(redriven.size(), runCount, remaining);
    }

    private List<ItemJob> reopen(Connection connection, List<ItemJob> jobs) throws SQLException {
        Set<UUID> runIds = jobs.stream().map(ItemJob::runId).collect(Collectors.toSet());
        runs.reopen(connection, runIds);
        return jobs;
    }
}
