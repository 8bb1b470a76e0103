package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryStore;
import dev.runner.retention.RetentionStore;
import dev.runner.run.RunRequestStore;

import java.time.Duration;

/**
 * What is kept only so long, each part one step of the scheduler's sweep: deliveries and
 * idempotency keys older than their windows are forgotten, and runs, items and dead letters past
 * retention deleted (RetentionStore).
 */
public final class RetentionSweep {

    private static final int MAX_FORGOTTEN = 10_000;
    /** Rows per retention batch (one short transaction each), and how much of a tick retention may take. */
    private static final int RETENTION_BATCH = 10_000;
    private static final Duration RETENTION_BUDGET = Duration.ofSeconds(15);

    private final RunnerConfig config;
    private final DeliveryStore deliveries;
    private final RunRequestStore runRequests;
    private final RetentionStore retention;

    public RetentionSweep(RunnerConfig config, DeliveryStore deliveries, RunRequestStore runRequests, RetentionStore retention) {
        this.config = config;
        this.deliveries = deliveries;
        this.runRequests = runRequests;
        this.retention = retention;
    }

    /** Deliveries past the dedup window and idempotency keys past theirs: forgotten. Returns how many. */
    int forget() {
        return deliveries.purge(config.webhooks().dedupWindow(), MAX_FORGOTTEN) + runRequests.purge(MAX_FORGOTTEN);
    }

    /** Rows past retention, deleted in batches for at most the budget. Returns how many. */
    long trim() {
        return retention.trim(config.retention(), RETENTION_BATCH, RETENTION_BUDGET).total();
    }
}
