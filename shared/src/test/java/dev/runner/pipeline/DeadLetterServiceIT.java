package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.metrics.Metrics;
import dev.runner.queue.QueueMessage;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A dead letter that overtakes its worker's record (the worker sends to the DLQ first, then records the hand-off): the
 * dead-letter function looks again after short pauses and marks the item once the record has landed, instead of leaving
 * it to the DLQ's visibility timeout; an item still in a call after every pause is left to that timeout, as before.
 */
class DeadLetterServiceIT {

    private static final Duration LEASE = Duration.ofMinutes(5);

    private static TestStack stack;
    private static RunnerConfig config;
    private static Database db;
    private static ItemStore items;
    private static ItemQueries queries;
    private static RunStore runs;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        config = stack.config();
        db = Database.connect(config.database(), 4, CostTracker.NONE);
        items = new ItemStore(db, Clock.systemUTC());
        queries = new ItemQueries(db);
        runs = new RunStore(db);
    }

    @AfterAll
    static void stop() {
        db.close();
        stack.close();
    }

    @Test
    void aDeadLetterThatOvertakesItsWorkersRecordMarksTheItemOnceTheRecordLands() {
        RunRef run = openRun();
        ItemJob job = insertOne(run);
        items.claim(List.of(job.itemId()), LEASE);
        List<Duration> pauses = new ArrayList<>();
        DeadLetterService service = service(wait -> {
            pauses.add(wait);
            if (pauses.size() == 2) {
                // The worker's record of the hand-off lands while the dead-letter function waits.
                items.record(List.of(new ItemStore.Result.HandedToDlq(job.itemId(), "422", false)));
            }
        });

        List<String> again = service.process(List.of(deadLetter(job)));

        assertEquals(List.of(), again, "nothing left for the DLQ's visibility timeout");
        assertEquals(DeadLetterService.HANDOFF_PAUSES.subList(0, 2), pauses);
        assertEquals(Map.of(ItemStatus.DEAD, 1L), queries.countByStatus(run.runId()));
        assertEquals(RunStatus.COMPLETED_WITH_ERRORS, runs.find(run.runId()).orElseThrow().status(), "its run ended with it");
    }

    @Test
    void anItemStillInItsCallAfterEveryPauseIsLookedAtAgainAfterTheVisibilityTimeout() {
        RunRef run = openRun();
        ItemJob job = insertOne(run);
        items.claim(List.of(job.itemId()), LEASE);
        List<Duration> pauses = new ArrayList<>();
        QueueMessage letter = deadLetter(job);

        List<String> again = service(pauses::add).process(List.of(letter));

        assertEquals(List.of(letter.messageId()), again);
        assertEquals(DeadLetterService.HANDOFF_PAUSES, pauses);
        assertEquals(Map.of(ItemStatus.PROCESSING, 1L), queries.countByStatus(run.runId()), "its call decides");
        assertEquals(RunStatus.RUNNING, runs.find(run.runId()).orElseThrow().status());
    }

    private static DeadLetterService service(DeadLetterService.Pause pause) {
        return new DeadLetterService(config, items, runs, new DeadLetterStore(db), Metrics.NONE, pause);
    }

    private static QueueMessage deadLetter(ItemJob job) {
        String dlq = config.queues().itemsDlq();
        return new QueueMessage(UUID.randomUUID().toString(), ItemMessage.write(List.of(job)), "receipt", 1,
                dlq.substring(dlq.lastIndexOf('/') + 1), Map.of("error", "422"));
    }

    private static RunRef openRun() {
        String tenant = "t-" + UUID.randomUUID();
        RunJob job = new RunJob(UUID.randomUUID(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL, null);
        db.inTransaction(connection -> runs.insert(connection, job, RunStatus.RUNNING, null));
        return new RunRef(job.runId(), tenant, "crm-x", "leads", Direction.INBOUND, Trigger.MANUAL);
    }

    private static ItemJob insertOne(RunRef run) {
        return items.insert(run, List.of(new ItemStore.NewItem("e-1", JsonNodeFactory.instance.objectNode()))).getFirst();
    }
}
