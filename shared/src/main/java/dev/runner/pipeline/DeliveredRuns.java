package dev.runner.pipeline;

import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.run.RunJob;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * Runs whose items are delivered with them (webhook, ingest): the run stored running with its items
 * in one transaction, then the items sent to the trigger's tier ({@link ItemDispatcher#commitThenSend}).
 */
public final class DeliveredRuns {

    private final RunStore runs;
    private final ItemStore items;
    private final ItemDispatcher dispatcher;
    private final Clock clock;

    public DeliveredRuns(RunStore runs, ItemStore items, ItemDispatcher dispatcher, Clock clock) {
        this.runs = runs;
        this.items = items;
        this.dispatcher = dispatcher;
        this.clock = clock;
    }

    /**
     * The run and its items in one transaction, then the items sent. {@code fresh} filters out what
     * was already seen (deliveries, items) inside the same transaction; when nothing is left, no run
     * is made at all, so a repeated delivery leaves no trace but its dedup rows.
     */
    RunService.Started start(String tenantId, String integrationKey, HandlerSpec handler, Trigger trigger,
                             List<ItemStore.NewItem> newItems, RunService.Keep fresh) {
        RunJob run = new RunJob(Ids.next(clock), tenantId, integrationKey, handler.handlerKey(), handler.direction(), trigger, null);
        Optional<List<ItemJob>> created = dispatcher.commitThenSend(connection -> {
            List<ItemStore.NewItem> kept = fresh.keep(connection, run.runId(), newItems);
            if (kept.isEmpty() && !newItems.isEmpty()) {
                return Optional.empty();
            }
            runs.insert(connection, run, RunStatus.RUNNING, null);
            return Optional.of(items.insert(connection, run.ref(), kept, handler.configs().orderedByRecord()));
        }, made -> made.orElse(List.of()));
        if (created.isEmpty()) {
            return new RunService.Started(null, newItems.size(), 0);
        }
        if (created.get().isEmpty()) {
            runs.completeIfDone(List.of(run.runId()));
        }
        return new RunService.Started(run.runId(), newItems.size(), created.get().size());
    }
}
