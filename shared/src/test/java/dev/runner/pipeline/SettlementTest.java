package dev.runner.pipeline;

import dev.runner.config.RunnerConfig;
import dev.runner.handler.Outcome;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.packing.ItemPacker;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueMessage;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What each fate of an item means, without any I/O: the plan the worker carries out. */
class SettlementTest {

    private static final String WEBHOOK_TIER = "http://sqs/000/stack-items-webhook";
    private static final String MANUAL_TIER = "http://sqs/000/stack-items-manual";
    private static final String ITEMS_DLQ = "http://sqs/000/stack-items-dlq";
    private static final RunnerConfig.Queues QUEUES = queues();
    private static final Settlement SETTLEMENT = new Settlement(new RunnerConfig.Retry(3, Duration.ofSeconds(5)), QUEUES,
            new ItemPacker(100));

    @Test
    void aSuccessIsRecordedAndItsRunChecked() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 1, new Outcome.Succeeded())));

        assertEquals(List.of(new ItemStore.Result.Succeeded(item.itemId())), plan.results());
        assertEquals(Set.of(item.job().runId()), plan.runsToCheck());
        assertTrue(plan.toDlq().isEmpty() && plan.resends().isEmpty());
        assertEquals(1, plan.tally().succeeded());
    }

    @Test
    void aPendingAnswerWritesNoRowSendsNoMessageAndBeginsToWait() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 2, new Outcome.Pending())));

        assertEquals(List.of(new Settlement.Waiting(item, 2)), plan.waiting(), "it waits in the attempt it was answered in");
        assertEquals(List.of(), plan.results());
        assertEquals(Map.of(), plan.resends());
        assertEquals(List.of(), plan.toDlq());
        assertEquals(Set.of(), plan.runsToCheck(), "a waiting item keeps its run open");
        assertEquals(1, plan.tally().pending());
    }

    @Test
    void aRetryableFailureWithAttemptsLeftIsSentAgainAfterItsBackoffCarryingTheAttemptsItUsed() {
        Item item = item(Trigger.MANUAL);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 2, new Outcome.Failed("handler answered 503", true))));

        assertEquals(List.of(new ItemStore.Result.Retrying(item.itemId(), "handler answered 503", 10)), plan.results(),
                "attempt 2 failed: base 5 s * 2^(2-1)");
        Settlement.Resend resend = plan.resends().get(MANUAL_TIER).getFirst();
        assertEquals(10, resend.message().delaySeconds(), "a copy delayed by the backoff, not the received message kept");
        ItemJob resent = ItemJob.fromJson(Json.parse(resend.message().body()));
        assertEquals(2, resent.attempt(), "the attempts used travel with it");
        assertEquals(0, resent.deferrals(), "a retry is not a deferral");
        assertEquals(Set.of(item.message().messageId()), resend.originalMessageIds());
        assertTrue(plan.toDlq().isEmpty());
        assertTrue(plan.runsToCheck().isEmpty(), "a retrying item keeps its run open");
    }

    @Test
    void theLastAttemptGoesToTheDlqWithItsErrorAndAttemptCount() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 3, new Outcome.Failed("timed out", true))));

        assertEquals(List.of(new ItemStore.Result.HandedToDlq(item.itemId(), "timed out (attempt 3 of 3)", false)), plan.results());
        assertEquals(1, plan.toDlq().size());
        var body = Json.parse(plan.toDlq().getFirst().body());
        assertEquals(item.itemId().toString(), body.path("itemId").asText());
        assertEquals(3, body.path("attempt").asInt());
        assertEquals("timed out (attempt 3 of 3)", body.path("error").asText());
        assertTrue(plan.resends().isEmpty(), "the original is deleted: the DLQ copy carries it on");
    }

    @Test
    void aPermanentFailureGoesToTheDlqAtOnceWhateverItsAttempts() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 1, new Outcome.Failed("handler answered 422", false))));

        assertEquals(List.of(new ItemStore.Result.HandedToDlq(item.itemId(), "handler answered 422", false)), plan.results());
        assertEquals(1, plan.toDlq().size());
        assertEquals(1, plan.tally().handedToDlq());
    }

    @Test
    void anItemReclaimedPastItsLastAttemptGoesToTheDlqWithTheUnusedAttemptGivenBack() {
        Item item = item(Trigger.MANUAL);

        // Max 3 attempts: the worker that made the third call died; the reclaim counted a fourth no call used.
        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Exhausted(item, 4)));

        assertEquals(List.of(new ItemStore.Result.HandedToDlq(item.itemId(), Settlement.EXHAUSTED_ERROR, true)), plan.results());
        var body = Json.parse(plan.toDlq().getFirst().body());
        assertEquals(3, body.path("attempt").asInt(), "the attempts the item used, not the reclaim's");
        assertEquals(Settlement.EXHAUSTED_ERROR, body.path("error").asText());
        assertTrue(plan.resends().isEmpty());
        assertEquals(1, plan.tally().handedToDlq());
    }

    @Test
    void aHandlerDeferralGivesTheAttemptBackAndResendsDelayed() {
        Item item = item(Trigger.MANUAL);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 2, new Outcome.Deferred(Duration.ofMillis(7_200), "429"))));

        assertEquals(List.of(new ItemStore.Result.Deferred(item.itemId(), 8)), plan.results(), "7.2 s rounds up to 8");
        OutgoingMessage resent = plan.resends().get(MANUAL_TIER).getFirst().message();
        assertEquals(8, resent.delaySeconds());
        ItemJob job = ItemJob.fromJson(Json.parse(resent.body()));
        assertEquals(1, job.attempt(), "the attempt the handler declined is not counted");
        assertEquals(1, job.deferrals());
        assertEquals(Map.of(Reason.HANDLER_ASKED, 1), plan.tally().deferred());
    }

    @Test
    void aHandlerAskingToWaitAtOnceWaitsAtLeastTheBackoffOfItsWaitsSoFar() {
        Item item = new Item(message(null), job(Trigger.MANUAL).askedToWait().askedToWait());

        // Retry-After: 0 reads as HandlerAnswers' shortest, 1 s; this is the item's third wait: 5 s · 2².
        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 1, new Outcome.Deferred(Duration.ofSeconds(1), "429"))));

        assertEquals(List.of(new ItemStore.Result.Deferred(item.itemId(), 20)), plan.results());
        ItemJob resent = ItemJob.fromJson(Json.parse(plan.resends().get(MANUAL_TIER).getFirst().message().body()));
        assertEquals(3, resent.handlerWaits());
        assertEquals(0, resent.attempt(), "still given back");
    }

    @Test
    void aHandlerThatKeepsAskingToWaitHasItsAttemptsCountedSoTheItemEnds() {
        ItemJob waitedEnough = job(Trigger.MANUAL);
        for (int i = 0; i < Settlement.MAX_HANDLER_WAITS; i++) {
            waitedEnough = waitedEnough.askedToWait();
        }
        Item early = new Item(message(null), waitedEnough);
        Item last = new Item(message(null), waitedEnough.withAttempt(2));
        Outcome wait = new Outcome.Deferred(Duration.ofSeconds(1), "429");

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(early, 1, wait), new Fate.Called(last, 3, wait)));

        assertTrue(plan.results().getFirst() instanceof ItemStore.Result.Retrying, "an attempt used: " + plan.results());
        assertTrue(plan.results().get(1) instanceof ItemStore.Result.HandedToDlq, "the last attempt ends it: " + plan.results());
        ItemJob retried = ItemJob.fromJson(Json.parse(plan.resends().get(MANUAL_TIER).getFirst().message().body()));
        assertEquals(1, retried.attempt(), "sent again as a retry, its attempt counted");
        assertEquals(waitedEnough.deferrals(), retried.deferrals(), "not deferred again");
    }

    @Test
    void anAdmissionDeferralResendsToItsTierAndRecordsWhenItIsDue() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Deferred(item, Duration.ofSeconds(40), Reason.TENANT_LIMIT)));

        assertEquals(List.of(new ItemStore.Result.Waiting(item.itemId(), 40)), plan.results());
        Settlement.Resend resend = plan.resends().get(WEBHOOK_TIER).getFirst();
        assertEquals(40, resend.message().delaySeconds());
        assertEquals("tenant-1", resend.message().groupId(), "fair queues group by tenant");
        assertEquals(Set.of(item.message().messageId()), resend.originalMessageIds(), "kept to fall back on if the re-send fails");
    }

    @Test
    void aCopyThatArrivesBeforeItsItemIsDueIsResentForThenWithoutMovingTheDueTime() {
        Item item = item(Trigger.WEBHOOK);

        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Deferred(item, Duration.ofMillis(1_001), Reason.NOT_DUE)));

        // Were the row's due time rewritten to now + 2 s (whole seconds, rounded up), each early copy of several
        // would push it later, past the others' return, and the item would never come due.
        assertTrue(plan.results().isEmpty(), "the row keeps its due time: " + plan.results());
        assertEquals(2, plan.resends().get(WEBHOOK_TIER).getFirst().message().delaySeconds());
        assertEquals(Map.of(Reason.NOT_DUE, 1), plan.tally().deferred());
    }

    @Test
    void delaysStayWithinSqsLimits() {
        assertEquals(1, Settlement.delaySeconds(Duration.ZERO), "never a 0-second loop");
        assertEquals(1, Settlement.delaySeconds(Duration.ofMillis(-5)));
        assertEquals(900, Settlement.delaySeconds(Duration.ofDays(3)), "SQS's 15-minute maximum");
        assertEquals(43_200, SETTLEMENT.backoffSeconds(40), "the backoff never exceeds 12 hours");
        Item item = item(Trigger.MANUAL);
        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Called(item, 2, new Outcome.Failed("503", true))));
        assertEquals(900, new Settlement(new RunnerConfig.Retry(20, Duration.ofMinutes(20)), QUEUES, new ItemPacker(100))
                .plan(List.of(new Fate.Called(item, 2, new Outcome.Failed("503", true)))).resends().get(MANUAL_TIER).getFirst()
                .message().delaySeconds(), "a longer backoff's copy comes at SQS's longest delay and waits again for the rest");
        assertEquals(10, plan.resends().get(MANUAL_TIER).getFirst().message().delaySeconds());
    }

    @Test
    void parkedAndSkippedItemsAreOnlyCounted() {
        Settlement.Plan plan = SETTLEMENT.plan(List.of(new Fate.Parked(item(Trigger.MANUAL)), new Fate.Skipped(item(Trigger.MANUAL))));

        assertTrue(plan.results().isEmpty() && plan.resends().isEmpty());
        assertEquals(1, plan.tally().parked());
        assertEquals(1, plan.tally().skipped());
    }

    @Test
    void itemsOfOnePackGoingAgainTheSameWayArePackedAndEachKeepsItsOwnAttemptsAndDelay() {
        QueueMessage pack = message(null);
        ItemJob first = job(Trigger.MANUAL);
        Item a = new Item(pack, first);
        Item b = new Item(pack, sameRun(first));
        Item c = new Item(pack, sameRun(first));
        Item d = new Item(pack, sameRun(first));
        Item e = new Item(pack, sameRun(first));

        Settlement.Plan plan = SETTLEMENT.plan(List.of(
                new Fate.Called(a, 1, new Outcome.Succeeded()),
                new Fate.Called(b, 1, new Outcome.Failed("503", true)),
                new Fate.Called(c, 1, new Outcome.Failed("503", true)),
                new Fate.Called(d, 2, new Outcome.Failed("503", true)),
                new Fate.Deferred(e, Duration.ofSeconds(5), Reason.HANDLER_RATE)));

        List<Settlement.Resend> resends = plan.resends().get(MANUAL_TIER);
        assertEquals(2, resends.size(), "b, c and e go back after 5 s, d after 10 s: " + resends);
        Map<Integer, List<ItemJob>> byDelay = new java.util.TreeMap<>();
        resends.forEach(r -> byDelay.merge(r.message().delaySeconds(), ItemMessage.read(Json.parse(r.message().body())),
                (x, y) -> java.util.stream.Stream.concat(x.stream(), y.stream()).toList()));
        assertEquals(List.of(b.itemId(), c.itemId(), e.itemId()), byDelay.get(5).stream().map(ItemJob::itemId).toList(),
                "same delay, same run: one tier message may hold both a retry and a deferral, each with its own counters");
        assertEquals(List.of(1, 1, 0), byDelay.get(5).stream().map(ItemJob::attempt).toList());
        assertEquals(List.of(0, 0, 1), byDelay.get(5).stream().map(ItemJob::deferrals).toList());
        assertEquals(List.of(d.itemId()), byDelay.get(10).stream().map(ItemJob::itemId).toList(), "attempt 2's backoff is its own");
        assertEquals(2, byDelay.get(10).getFirst().attempt());
        resends.forEach(r -> assertEquals(Set.of(pack.messageId()), r.originalMessageIds()));
        assertEquals(List.of(new ItemStore.Result.Succeeded(a.itemId())), plan.results().subList(0, 1),
                "the item that succeeded is recorded; its neighbours' retries do not hold it back");
    }

    @Test
    void aMixedBatchSettlesEveryItemAndTalliesEachFate() {
        List<Fate> fates = List.of(
                new Fate.Called(item(Trigger.WEBHOOK), 1, new Outcome.Succeeded()),
                new Fate.Called(item(Trigger.WEBHOOK), 1, new Outcome.Failed("503", true)),
                new Fate.Called(item(Trigger.WEBHOOK), 1, new Outcome.Failed("400", false)),
                new Fate.Deferred(item(Trigger.WEBHOOK), Duration.ofSeconds(3), Reason.HANDLER_CONCURRENCY),
                new Fate.Deferred(item(Trigger.WEBHOOK), Duration.ofSeconds(3), Reason.HANDLER_CONCURRENCY));

        Settlement.Plan plan = SETTLEMENT.plan(fates);

        assertEquals(5, plan.results().size(), "one row written per item, in one statement");
        Map<Reason, Integer> deferred = new EnumMap<>(Reason.class);
        deferred.put(Reason.HANDLER_CONCURRENCY, 2);
        assertEquals(new Settlement.Tally(1, 1, 1, 0, 0, 0, deferred), plan.tally());
    }

    private static Item item(Trigger trigger) {
        return new Item(message(null), job(trigger));
    }

    private static ItemJob job(Trigger trigger) {
        return new ItemJob(UUID.randomUUID(), UUID.randomUUID(), "tenant-1", "crm", "leads", Direction.INBOUND, trigger, "e-1", 0, 0);
    }

    private static ItemJob sameRun(ItemJob job) {
        return new ItemJob(job.runId(), UUID.randomUUID(), job.tenantId(), job.integrationKey(), job.handlerKey(), job.direction(),
                job.trigger(), "e-" + UUID.randomUUID(), 0, 0);
    }

    private static QueueMessage message(String sourceQueue) {
        String id = UUID.randomUUID().toString();
        return new QueueMessage(id, "{}", "receipt-" + id, 1, sourceQueue, Map.of());
    }

    private static RunnerConfig.Queues queues() {
        Map<Trigger, String> runs = new EnumMap<>(Trigger.class);
        runs.put(Trigger.MANUAL, "http://sqs/000/stack-runs-manual");
        runs.put(Trigger.SCHEDULE, "http://sqs/000/stack-runs-schedule");
        Map<Trigger, String> items = new EnumMap<>(Trigger.class);
        items.put(Trigger.WEBHOOK, WEBHOOK_TIER);
        items.put(Trigger.MANUAL, MANUAL_TIER);
        items.put(Trigger.QUEUE, "http://sqs/000/stack-items-queue");
        items.put(Trigger.SCHEDULE, "http://sqs/000/stack-items-schedule");
        return new RunnerConfig.Queues(runs, items, "http://sqs/000/stack-ingest", "http://sqs/000/stack-runs-dlq", ITEMS_DLQ,
                "http://sqs/000/stack-ingest-dlq");
    }
}
