package dev.runner.local;

import dev.runner.local.faults.FaultRun;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault run (issue 7) on the local runtime and real embedded servers: 4,416 items over 24
 * tenants (manual runs, webhooks, ingest messages) while Redis and Postgres restart, handlers flap
 * and hang, and messages arrive twice (SQS's copies, and deliveries their senders send again).
 * About two minutes; {@code -DexcludedGroups=fault-run} leaves it out. The benchmarks run the same
 * code ({@code java -jar bench/target/runner-bench.jar faults}).
 */
@Tag("fault-run")
class FaultRunIT {

    @Test
    void underRestartsFlapsHangsAndRedeliveriesNothingIsLostStuckOrMarkedSucceededTwice() {
        FaultRun.Figures figures = FaultRun.run(LocalRuntimeIT.projectTemplate(), FaultRun.Plan.standard(), System.out);
        System.out.println(figures.describe());

        assertAll(
                () -> figures.faults().forEach((kind, count) -> assertTrue(count > 0, "fault not injected: " + kind)),
                () -> assertEquals(0, figures.refused(), "requests a sender could never get accepted"),
                () -> assertEquals(0, figures.lost(), "accepted items without a row"),
                () -> assertEquals(0, figures.stuckItems(), "items neither succeeded nor dead: " + figures.itemsByStatus()),
                () -> assertEquals(0, figures.deadWithoutDlqAt(), "dead items without dlq_at"),
                () -> assertEquals(0, figures.runsNotEnded(), "runs not ended: " + figures.runsByStatus()),
                () -> assertEquals(0, figures.failedRuns(), "manual runs that gave up fetching: " + figures.runsByStatus()),
                () -> assertEquals(0, figures.duplicates(), "items Runner marked succeeded more than once"),
                () -> assertEquals(0, figures.madeTwice(), "deliveries sent again whose items Runner made again"),
                () -> assertEquals(0, figures.phantomSuccesses(), "items recorded succeeded that the handler never said succeeded"),
                () -> assertTrue(figures.itemsByStatus().getOrDefault("dead", 0L) > 0,
                        "the items the handler rejects end dead: " + figures.itemsByStatus()));
    }
}
