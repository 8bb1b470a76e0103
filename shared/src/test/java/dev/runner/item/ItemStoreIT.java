package dev.runner.item;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.cost.CostTracker;
import dev.runner.integration.Direction;
import dev.runner.run.RunJob;
import dev.runner.run.RunRef;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The item store's statements that take "at most n rows" on the real Postgres. */
class ItemStoreIT {

    private static TestStack stack;
    private static Database db;
    private static ItemStore items;
    private static RunStore runs;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        db = Database.connect(stack.config().database(), 4, CostTracker.NONE);
        items = new ItemStore(db, Clock.systemUTC());
        runs = new RunStore(db);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    /** A redrive of n puts n dead items back to work, no more (ManagementApiIT once saw 3 take 5). */
    @Test
    void aRedriveTakesNoMoreDeadItemsThanItsLimit() {
        String tenant = "t-" + UUID.randomUUID();
        RunRef run = deadRun(tenant, 60);
        ItemFilter filter = new ItemFilter(tenant, null, null, null);

        for (int limit : new int[] {1, 3, 7, 20}) {
            long before = items.countDead(filter);
            List<ItemJob> redriven = db.inTransaction(connection -> items.redriveDead(connection, filter, limit));
            assertEquals(limit, redriven.size(), "a redrive of " + limit);
            assertEquals(before - limit, items.countDead(filter), "dead items left after a redrive of " + limit);
            redriven.forEach(job -> assertEquals(run.runId(), job.runId()));
        }
    }

    private static RunRef deadRun(String tenant, int size) {
        RunJob job = new RunJob(UUID.randomUUID(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL, null);
        db.inTransaction(connection -> runs.insert(connection, job, RunStatus.RUNNING, null));
        RunRef run = new RunRef(job.runId(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL);
        List<ItemJob> inserted = items.insert(run, IntStream.range(0, size)
                .mapToObj(i -> new ItemStore.NewItem("e-" + i, JsonNodeFactory.instance.objectNode())).toList());
        items.markDead(inserted.stream().map(item -> new ItemStore.Dead(item.itemId(), "422")).toList());
        return run;
    }
}
