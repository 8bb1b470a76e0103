package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.runner.app.Runner;
import dev.runner.bulk.BulkAction;
import dev.runner.integration.Direction;
import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemFilter;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.json.Json;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStore;
import dev.runner.run.RunJob;
import dev.runner.run.RunRef;
import dev.runner.run.RunStatus;
import dev.runner.store.Database;
import dev.runner.testing.TestStack;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Bulk actions on the real Postgres, Redis and SQS, with pages of ten: asked for, an action answers at once with what
 * it will do and does its first page; the scheduler's part does the rest; overlapping ticks and a page that fails
 * midway change nothing twice and lose nothing.
 */
class BulkActionsIT {

    private static final int PAGE = 10;
    private static final Duration LEASE = Duration.ofMinutes(5);

    private static TestStack stack;
    private static Runner runner;
    private static Database db;
    private static ItemStore items;
    private static ItemQueries queries;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of("RUNNER_BULK_PAGE_SIZE", Integer.toString(PAGE), "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"));
        runner = new Runner(stack.config(), Clock.systemUTC());
        db = runner.database();
        items = new ItemStore(db, Clock.systemUTC());
        queries = new ItemQueries(db);
    }

    @AfterAll
    static void stop() {
        runner.close();
        stack.close();
    }

    /**
     * A run's 25 dead items: the ask redrives a page and says it will do 25; the tick does the rest, a page at a time;
     * an item that dies after the ask is not the action's. Every item is sent to its tier once.
     */
    @Test
    void aRedriveAnswersWithWhatItWillDoAndTheTickFinishesItPageByPage() {
        RunRef run = run("t-" + UUID.randomUUID(), RunStatus.COMPLETED_WITH_ERRORS, "crm-x", Trigger.MANUAL);
        List<UUID> dead = insert(run, 26);
        kill(dead.subList(0, 25));

        BulkActions.Asked asked = runner.bulk().ask(redriveOf(run), run.tenantId());
        BulkAction action = asked.action().orElseThrow();
        assertEquals(PAGE, asked.firstPage());
        assertEquals(25, action.total(), "what it will do, said at once");
        assertEquals(PAGE, action.done());
        assertEquals(BulkAction.Status.RUNNING, action.status());
        assertEquals("running", status(run.runId()), "its run is open again");

        kill(dead.subList(25, 26));
        BulkActions.Asked again = runner.bulk().ask(redriveOf(run), run.tenantId());
        assertEquals(action.actionId(), again.action().orElseThrow().actionId(), "asking again while it runs is answered with the running action");
        assertEquals(2 * PAGE, again.action().orElseThrow().done(), "and does a page of it");

        assertEquals(5, runner.bulk().continueRunning(), "the tick does what is left");
        BulkAction finished = runner.bulk().find(action.actionId()).orElseThrow();
        assertEquals(25, finished.done());
        assertEquals(BulkAction.Status.DONE, finished.status());
        assertEquals(Map.of(ItemStatus.QUEUED, 25L, ItemStatus.DEAD, 1L), queries.countByStatus(run.runId()),
                "the one that died after the ask is not the action's");
        assertEquals(25, sentToTier(Trigger.MANUAL), "each redriven item sent once");
    }

    /** Two ticks at once page one action in turn, never the same page twice: every item is cancelled once. */
    @Test
    void overlappingTicksPageAnActionInTurn() throws Exception {
        RunRef run = run("t-" + UUID.randomUUID(), RunStatus.RUNNING, "crm-x", Trigger.MANUAL);
        List<UUID> parked = insert(run, 95);
        db.update("update execution_items set status = 'parked' where item_id = any(?)", Database.array("uuid", parked.toArray()));

        BulkAction action = runner.bulk().ask(new BulkAction.Target.Cancel(run.runId()), run.tenantId()).action().orElseThrow();
        assertEquals(95, action.total());
        assertEquals("cancelled", status(run.runId()), "the run is cancelled at once");
        var ticks = List.of(CompletableFuture.supplyAsync(runner.bulk()::continueRunning),
                CompletableFuture.supplyAsync(runner.bulk()::continueRunning));
        long paged = 0;
        for (var tick : ticks) {
            paged += tick.get();
        }
        assertEquals(85, paged, "the pages after the first, each done by one tick");
        assertEquals(95, runner.bulk().find(action.actionId()).orElseThrow().done());
        assertEquals(Map.of(ItemStatus.CANCELLED, 95L), queries.countByStatus(run.runId()));
    }

    /**
     * A page that fails midway (its run cannot be reopened) rolls back whole: nothing of it is done or recorded, and
     * the next tick does it from where the last committed page ended.
     */
    @Test
    void aPageThatFailsMidwayIsDoneWholeByTheNextTick() {
        RunRef run = run("t-" + UUID.randomUUID(), RunStatus.COMPLETED_WITH_ERRORS, "crm-x", Trigger.QUEUE);
        List<UUID> dead = insert(run, 30);
        kill(dead);
        BulkAction action = runner.bulk().ask(redriveOf(run), run.tenantId()).action().orElseThrow();
        assertEquals(PAGE, action.done());

        db.update("""
                create or replace function bulk_actions_it_fails() returns trigger language plpgsql as $$
                begin raise exception 'a crash mid-page'; end $$
                """);
        db.update("update runs set status = 'completed_with_errors' where run_id = ?", run.runId());
        db.update("create trigger bulk_actions_it_fails before update on runs for each row execute function bulk_actions_it_fails()");
        try {
            assertThrows(RuntimeException.class, runner.bulk()::continueRunning);
        } finally {
            db.update("drop trigger bulk_actions_it_fails on runs");
        }
        assertEquals(PAGE, runner.bulk().find(action.actionId()).orElseThrow().done(), "the failed page recorded nothing");
        assertEquals(Map.of(ItemStatus.QUEUED, 10L, ItemStatus.DEAD, 20L), queries.countByStatus(run.runId()), "and changed nothing");

        runner.bulk().continueRunning();
        assertEquals(30, runner.bulk().find(action.actionId()).orElseThrow().done());
        assertEquals(Map.of(ItemStatus.QUEUED, 30L), queries.countByStatus(run.runId()));
    }

    /** A resume unparks a page at once and the rest on the tick; a disabled tenant integration's items stay parked. */
    @Test
    void aResumeUnparksPageByPageAndLeavesDisabledTenantsParked() {
        String integration = "crm-" + UUID.randomUUID().toString().substring(0, 8);
        db.update("insert into integration_types (integration_key, name, handlers) values (?, ?, ?::jsonb)", integration, integration,
                "{\"leads\": {\"url\": \"https://handlers.example/leads\"}}");
        RunRef enabled = run("t-" + UUID.randomUUID(), RunStatus.RUNNING, integration, Trigger.SCHEDULE);
        RunRef disabled = run("t-" + UUID.randomUUID(), RunStatus.RUNNING, integration, Trigger.SCHEDULE);
        db.update("insert into tenant_integrations (tenant_id, integration_key, enabled) values (?, ?, true), (?, ?, false)",
                enabled.tenantId(), integration, disabled.tenantId(), integration);
        List<UUID> parked = new java.util.ArrayList<>(insert(enabled, 22));
        parked.addAll(insert(disabled, 3));
        db.update("update execution_items set status = 'parked' where item_id = any(?)", Database.array("uuid", parked.toArray()));

        PauseService.Resumed resumed = runner.pauses().resume(new HandlerRef(integration, "leads"));
        assertEquals(PAGE, resumed.unparked());
        assertEquals(25, resumed.action().orElseThrow().total());
        runner.bulk().continueRunning();
        assertEquals(BulkAction.Status.DONE, runner.bulk().find(resumed.action().orElseThrow().actionId()).orElseThrow().status());
        assertEquals(Map.of(ItemStatus.QUEUED, 22L), queries.countByStatus(enabled.runId()));
        assertEquals(Map.of(ItemStatus.PARKED, 3L), queries.countByStatus(disabled.runId()));
    }

    private static BulkAction.Target redriveOf(RunRef run) {
        return new BulkAction.Target.Redrive(new ItemFilter(null, null, null, run.runId()), Long.MAX_VALUE);
    }

    /** A run on the tier of {@code trigger}: each test sends to a tier of its own, so it can count what reached it. */
    private static RunRef run(String tenant, RunStatus status, String integration, Trigger trigger) {
        RunJob job = new RunJob(UUID.randomUUID(), tenant, integration, "leads", Direction.INBOUND, trigger, null);
        db.inTransaction(connection -> runner.runStore().insert(connection, job, status, null));
        return new RunRef(job.runId(), tenant, integration, "leads", Direction.INBOUND, trigger);
    }

    private static List<UUID> insert(RunRef run, int size) {
        return items.insert(run, IntStream.range(0, size)
                .mapToObj(i -> new ItemStore.NewItem("e-" + i, JsonNodeFactory.instance.objectNode())).toList())
                .stream().map(ItemJob::itemId).toList();
    }

    /** Handed to the DLQ and marked dead, as the pipeline does. */
    private static void kill(List<UUID> ids) {
        items.claim(ids, LEASE);
        items.record(ids.stream().<ItemStore.Result>map(id -> new ItemStore.Result.HandedToDlq(id, "422", false)).toList());
        items.markDead(ids.stream().map(id -> new ItemStore.Dead(id, "422")).toList(), LEASE, 3);
    }

    private static String status(UUID runId) {
        return db.query("select status from runs where run_id = ?", row -> row.getString(1), runId).getFirst();
    }

    /** Messages on a tier's queue, visible or delayed (the tenant window may delay them). */
    /** Items on a tier's messages, packs counted item by item (the tenant limit is high, so none waits delayed). */
    private static long sentToTier(Trigger trigger) {
        String url = stack.url("items-" + trigger.wireName());
        long items = 0;
        List<Message> received;
        do {
            received = stack.sqs().receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).visibilityTimeout(60)).messages();
            for (Message message : received) {
                items += ItemMessage.read(Json.parse(message.body())).size();
            }
        } while (!received.isEmpty());
        return items;
    }
}
