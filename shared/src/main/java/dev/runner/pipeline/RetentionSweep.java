package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryStore;
import dev.runner.retention.RetentionStore;
import dev.runner.run.RunRequestStore;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * What is kept only so long, each part one step of the scheduler's sweep: deliveries and
 * idempotency keys older than their windows are forgotten, and runs, items and dead letters past
 * retention deleted (RetentionStore). Each part deletes in batches (one short statement each) until
 * nothing past its window is left or its share of the tick is spent, so it keeps pace with what
 * arrives however fast that is, as far as the budget allows (docs/capacity.md).
 */
public final class RetentionSweep {

    /** Rows per batch (one short transaction each), and how much of a tick each part may take. */
    private static final int FORGET_BATCH = 10_000;
    private static final Duration FORGET_BUDGET = Duration.ofSeconds(5);
    private static final int RETENTION_BATCH = 10_000;
    private static final Duration RETENTION_BUDGET = Duration.ofSeconds(15);

    private final RunnerConfig config;
    private final DeliveryStore deliveries;
    private final RunRequestStore runRequests;
    private final RetentionStore retention;
    private final Clock clock;

    /** @param clock wall time: the budgets are spent in it, whatever clock the rest of the root runs on */
    public RetentionSweep(RunnerConfig config, DeliveryStore deliveries, RunRequestStore runRequests, RetentionStore retention,
                          Clock clock) {
        this.config = config;
        this.deliveries = deliveries;
        this.runRequests = runRequests;
        this.retention = retention;
        this.clock = clock;
    }

    /** Deliveries past their windows and idempotency keys past theirs, batch after batch within the budget. Returns how many. */
    int forget() {
        Instant stop = clock.instant().plus(FORGET_BUDGET);
        int forgotten = 0;
        boolean deliveriesLeft = true;
        boolean requestsLeft = true;
        while ((deliveriesLeft || requestsLeft) && clock.instant().isBefore(stop)) {
            int purged = deliveriesLeft ? deliveries.purge(config.webhooks().dedupWindow(), FORGET_BATCH) : 0;
            int requests = requestsLeft ? runRequests.purge(FORGET_BATCH) : 0;
            deliveriesLeft = purged == FORGET_BATCH;
            requestsLeft = requests == FORGET_BATCH;
            forgotten += purged + requests;
        }
        return forgotten;
    }

    /** Rows past retention, deleted in batches for at most the budget. Returns how many. */
    long trim() {
        return retention.trim(config.retention(), RETENTION_BATCH, RETENTION_BUDGET).total();
    }
}
