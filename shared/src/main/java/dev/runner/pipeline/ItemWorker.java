package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.guard.HandlerLimits;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pause.PauseStore;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

/**
 * Processes one SQS batch of items (DESIGN 4): parse, group by handler, admit (Redis), claim,
 * call, report (Redis), record, complete runs. What one all-success batch costs: 3 Postgres statements (claim, record, complete),
 * one handler call per {@code batch_size} items for batch handlers, one Redis round trip (admit;
 * a report only when there is something to report: a failure, leases, a breaker not clean), no
 * SQS request of its own (receive and delete belong to the event source mapping).
 * Deferral never uses an attempt: the item is re-sent with a computed DelaySeconds and its
 * original acknowledged.
 */
public final class ItemWorker {

    private static final Log LOG = Log.of(ItemWorker.class);
    /** What recording a batch's outcomes may take after its handler calls. */
    private static final long RECORD_RESERVE_MS = 5_000;
    /** SQS's longest visibility timeout. */
    private static final int MAX_VISIBILITY_SECONDS = 43_200;

    /** Message ids the event source must not delete: they come back after their visibility timeout. */
    public record BatchResult(List<String> failedMessageIds) {}

    private record Received(QueueMessage message, ItemJob job) {}

    private record Group(String integrationKey, String handlerKey) {
        HandlerRef ref() {
            return new HandlerRef(integrationKey, handlerKey);
        }
    }

    private final RunnerConfig config;
    private final ItemStore items;
    private final PauseStore pauses;
    private final RunStore runs;
    private final Integrations integrations;
    private final HandlerClient handlers;
    private final QueueClient queues;
    private final DeadLetterStore deadLetters;
    private final Guard guard;
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();

    public ItemWorker(RunnerConfig config, ItemStore items, PauseStore pauses, RunStore runs, Integrations integrations,
                      HandlerClient handlers, QueueClient queues, DeadLetterStore deadLetters, Guard guard) {
        this.config = config;
        this.items = items;
        this.pauses = pauses;
        this.runs = runs;
        this.integrations = integrations;
        this.handlers = handlers;
        this.queues = queues;
        this.deadLetters = deadLetters;
        this.guard = guard;
    }

    /** @param remainingMillis the invocation's time left: handler calls never outlive it */
    public BatchResult process(List<QueueMessage> messages, LongSupplier remainingMillis) {
        List<Received> received = parse(messages);
        if (received.isEmpty()) {
            return new BatchResult(List.of());
        }
        Map<UUID, Received> byItem = new LinkedHashMap<>();
        for (Received r : received) {
            byItem.putIfAbsent(r.job().itemId(), r);
        }
        Map<Group, List<Received>> groups = group(byItem.values());
        Map<Group, HandlerSpec> specs = new HashMap<>();
        groups.keySet().forEach(g -> integrations.handler(g.integrationKey(), g.handlerKey()).ifPresent(spec -> specs.put(g, spec)));

        Admitted admitted = admit(groups, specs);
        Map<UUID, ItemStore.Claimed> claimed = items.claim(admitted.itemIds(), config.itemClaimLease());
        if (claimed.size() < admitted.itemIds().size()) {
            LOG.info("skipped", "items", admitted.itemIds().size() - claimed.size(), "why", "already ended, parked or being processed");
        }
        Map<Group, List<Received>> toCall = new LinkedHashMap<>();
        groups.forEach((group, members) -> {
            List<Received> claimedMembers = members.stream().filter(r -> claimed.containsKey(r.job().itemId())).toList();
            if (!claimedMembers.isEmpty()) {
                toCall.put(group, claimedMembers);
            }
        });
        List<CallResult> results = List.of();
        try {
            results = callHandlers(toCall, specs, claimed, callDeadline(remainingMillis));
        } finally {
            // Leases are given back even when a call crashed, or a low-concurrency handler would stall until they expire.
            report(admitted, results);
        }
        Map<UUID, Outcome> outcomes = new HashMap<>();
        results.forEach(result -> outcomes.putAll(result.outcomes()));
        return settle(byItem, claimed, outcomes, admitted.deferred());
    }

    /** Items of one handler, most urgent first: admission serves them in this order. */
    private static Map<Group, List<Received>> group(Collection<Received> received) {
        Map<Group, List<Received>> groups = new LinkedHashMap<>();
        received.stream()
                .sorted(Comparator.comparingInt(r -> r.job().trigger().priority()))
                .forEach(r -> groups.computeIfAbsent(new Group(r.job().integrationKey(), r.job().handlerKey()), g -> new ArrayList<>()).add(r));
        return groups;
    }

    /** What admission let through, and what it sent back to wait. */
    /** @param quiet groups whose report would change nothing if all their calls succeed: clean breaker, no leases */
    private record Admitted(Set<UUID> itemIds, Map<Group, List<String>> leasesByGroup, List<Deferral> deferred, Set<Group> quiet) {}

    /** An item re-sent for later without using an attempt. */
    private record Deferral(Received received, Duration delay, String reason) {}

    /**
     * Step 1 (DESIGN 4): one pipelined Redis round trip decides every group's items: admitted,
     * deferred (with the computed delay) or paused (parked in Postgres, no SQS traffic). Items of
     * an unknown handler skip admission and fail permanently after their claim.
     */
    private Admitted admit(Map<Group, List<Received>> groups, Map<Group, HandlerSpec> specs) {
        Set<UUID> admittedIds = new LinkedHashSet<>();
        Map<Group, List<String>> leases = new HashMap<>();
        List<Deferral> deferred = new ArrayList<>();
        List<GroupRequest> requests = new ArrayList<>();
        Map<String, Received> byId = new HashMap<>();
        for (var entry : groups.entrySet()) {
            HandlerSpec spec = specs.get(entry.getKey());
            if (spec == null) {
                entry.getValue().forEach(r -> admittedIds.add(r.job().itemId()));
                continue;
            }
            List<Candidate> candidates = new ArrayList<>();
            for (Received r : entry.getValue()) {
                candidates.add(new Candidate(r.job().itemId().toString(), r.job().tenantId(), r.job().trigger().priority()));
                byId.put(r.job().itemId().toString(), r);
            }
            requests.add(new GroupRequest(entry.getKey().integrationKey(), entry.getKey().handlerKey(),
                    new HandlerLimits(spec.configs().concurrency(), spec.configs().ratePerMinute()), candidates));
        }
        Map<Group, List<UUID>> paused = new HashMap<>();
        Set<Group> failedOpen = new LinkedHashSet<>();
        Set<Group> quiet = new LinkedHashSet<>();
        for (GroupAdmission admission : guard.admit(requests)) {
            Group group = new Group(admission.request().integrationKey(), admission.request().handlerKey());
            if (admission.failedOpen()) {
                failedOpen.add(group);
            }
            if (admission.breakerClean() && admission.request().limits().concurrency() == 0) {
                quiet.add(group);
            }
            for (Admission decision : admission.decisions()) {
                Received r = byId.get(decision.itemId());
                switch (decision) {
                    case Admission.Admitted a -> {
                        admittedIds.add(r.job().itemId());
                        leases.computeIfAbsent(group, g -> new ArrayList<>()).add(a.itemId());
                    }
                    case Admission.Deferred d -> deferred.add(new Deferral(r, d.delay(), d.reason().name().toLowerCase(Locale.ROOT)));
                    case Admission.Paused p -> paused.computeIfAbsent(group, g -> new ArrayList<>()).add(r.job().itemId());
                }
            }
        }
        // Redis away: admission could not see pauses, so Postgres, which holds them, is asked.
        for (Group group : pausedInPostgres(failedOpen)) {
            for (Received r : groups.get(group)) {
                if (admittedIds.remove(r.job().itemId())) {
                    paused.computeIfAbsent(group, g -> new ArrayList<>()).add(r.job().itemId());
                }
            }
        }
        paused.forEach((group, ids) -> {
            Set<UUID> parked = pauses.park(ids, group.ref());
            if (parked.isEmpty() && !pauses.isPaused(group.ref())) {
                // Redis says paused, Postgres (the truth) no longer: a resume whose mirror update failed. Heal it.
                try {
                    guard.setPaused(group.integrationKey(), group.handlerKey(), false);
                } catch (RuntimeException e) {
                    LOG.warn("stale pause flag not cleared", "integrationKey", group.integrationKey(), "error", e);
                }
            }
            for (UUID id : ids) {
                if (!parked.contains(id)) {
                    // Resumed meanwhile, or not parkable now: it must not be dropped, so it waits briefly.
                    Received r = groups.get(group).stream().filter(x -> x.job().itemId().equals(id)).findFirst().orElseThrow();
                    deferred.add(new Deferral(r, config.tenantLimit().shortestDeferral(), "paused_race"));
                }
            }
            if (!parked.isEmpty()) {
                LOG.info("parked", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(), "items", parked.size());
            }
        });
        return new Admitted(admittedIds, leases, deferred, quiet);
    }

    private Set<Group> pausedInPostgres(Set<Group> groups) {
        Set<Group> paused = new LinkedHashSet<>();
        pauses.pausedAmong(groups.stream().map(Group::ref).toList())
                .forEach(ref -> paused.add(new Group(ref.integrationKey(), ref.handlerKey())));
        return paused;
    }

    /**
     * Step 5: the breaker hears one outcome per handler call (a failed /process-batch is one
     * failure, not ten: it is one look at the endpoint), and every lease admission took is
     * released, whether its item was called, skipped at claim or failed. One round trip.
     */
    private void report(Admitted admitted, List<CallResult> results) {
        Map<Group, List<GroupReport.Call>> calls = new LinkedHashMap<>();
        admitted.leasesByGroup().keySet().forEach(group -> calls.put(group, new ArrayList<>()));
        for (CallResult result : results) {
            if (result.observation() == Observation.NONE) {
                continue;
            }
            calls.computeIfAbsent(result.group(), g -> new ArrayList<>()).add(new GroupReport.Call(
                    result.outcomes().keySet().stream().map(UUID::toString).toList(), result.observation() == Observation.UP));
        }
        List<GroupReport> reports = new ArrayList<>();
        calls.forEach((group, groupCalls) -> {
            // Steady state: successes on a clean breaker with no leases to give back need no round trip.
            // (Failures another worker counts meanwhile are then not reset by these successes: the
            // breaker may open one success earlier, the safe side.)
            if (groupCalls.stream().allMatch(GroupReport.Call::up) && admitted.quiet().contains(group)) {
                return;
            }
            reports.add(new GroupReport(group.integrationKey(), group.handlerKey(), groupCalls,
                    admitted.leasesByGroup().getOrDefault(group, List.of())));
        });
        if (!reports.isEmpty()) {
            guard.report(reports);
        }
    }

    private List<Received> parse(List<QueueMessage> messages) {
        List<Received> received = new ArrayList<>(messages.size());
        List<DeadLetterStore.DeadLetter> unreadable = new ArrayList<>();
        for (QueueMessage message : messages) {
            try {
                received.add(new Received(message, ItemJob.fromJson(Json.parse(message.body()))));
            } catch (Json.InvalidJsonException e) {
                unreadable.add(new DeadLetterStore.DeadLetter(message.sourceQueue(), "unreadable item job: " + e.getMessage(),
                        message.body(), Map.of("messageId", message.messageId())));
            }
        }
        if (!unreadable.isEmpty()) {
            deadLetters.keep(unreadable);
            LOG.warn("kept unreadable messages", "count", unreadable.size());
        }
        return received;
    }

    /** What one handler call told about its endpoint: the breaker's input. */
    private enum Observation { UP, DOWN, NONE }

    private record CallResult(Group group, Map<UUID, Outcome> outcomes, Observation observation) {
        static CallResult of(Group group, Map<UUID, Outcome> outcomes) {
            boolean allDown = !outcomes.isEmpty() && outcomes.values().stream()
                    .allMatch(o -> o instanceof Outcome.Failed f && f.retryable());
            boolean anyAnswer = outcomes.values().stream().anyMatch(o -> !(o instanceof Outcome.Deferred));
            return new CallResult(group, outcomes, allDown ? Observation.DOWN : anyAnswer ? Observation.UP : Observation.NONE);
        }
    }

    /** Time left for handler calls: the invocation's, less what recording the outcomes needs. */
    private static Duration callDeadline(LongSupplier remainingMillis) {
        return Duration.ofMillis(Math.max(1_000, remainingMillis.getAsLong() - RECORD_RESERVE_MS));
    }

    /** Every group's calls at once; a group's handler sees batches of its batch_size, or one call per item. */
    private List<CallResult> callHandlers(Map<Group, List<Received>> groups, Map<Group, HandlerSpec> specs,
                                          Map<UUID, ItemStore.Claimed> claimed, Duration timeLeft) {
        List<Future<CallResult>> pending = new ArrayList<>();
        List<CallResult> results = new ArrayList<>();
        for (var entry : groups.entrySet()) {
            Group group = entry.getKey();
            HandlerSpec spec = specs.get(group);
            List<Received> exhausted = entry.getValue().stream()
                    .filter(r -> claimed.get(r.job().itemId()).attempt() > config.retry().maxAttempts()).toList();
            if (!exhausted.isEmpty()) {
                // Reclaimed after a crash past its last attempt: the DLQ, not another call.
                Map<UUID, Outcome> outcomes = new HashMap<>();
                exhausted.forEach(r -> outcomes.put(r.job().itemId(),
                        new Outcome.Failed("no attempt left after its worker stopped mid-call", false)));
                results.add(new CallResult(group, outcomes, Observation.NONE));
                List<Received> rest = new ArrayList<>(entry.getValue());
                rest.removeAll(exhausted);
                if (rest.isEmpty()) {
                    continue;
                }
                entry.setValue(rest);
            }
            if (spec == null) {
                Outcome unknown = new Outcome.Failed("unknown handler " + group.integrationKey() + "/" + group.handlerKey(), false);
                Map<UUID, Outcome> outcomes = new HashMap<>();
                entry.getValue().forEach(r -> outcomes.put(r.job().itemId(), unknown));
                results.add(new CallResult(group, outcomes, Observation.NONE));
                continue;
            }
            List<Received> members = entry.getValue();
            if (spec.batch()) {
                int size = spec.configs().batchSize();
                for (int from = 0; from < members.size(); from += size) {
                    List<Received> chunk = members.subList(from, Math.min(members.size(), from + size));
                    pending.add(calls.submit(() -> CallResult.of(group, callBatch(spec, chunk, claimed, timeLeft))));
                }
            } else {
                for (Received member : members) {
                    pending.add(calls.submit(() -> CallResult.of(group, Map.of(member.job().itemId(), callOne(spec, member, claimed, timeLeft)))));
                }
            }
        }
        for (Future<CallResult> future : pending) {
            try {
                results.add(future.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while calling handlers", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("handler call crashed", e.getCause());
            }
        }
        return results;
    }

    private Map<UUID, Outcome> callBatch(HandlerSpec spec, List<Received> chunk, Map<UUID, ItemStore.Claimed> claimed,
                                         Duration timeLeft) {
        List<ObjectNode> bodies = new ArrayList<>(chunk.size());
        List<String> ids = new ArrayList<>(chunk.size());
        for (Received r : chunk) {
            bodies.add(itemBody(r.job(), claimed.get(r.job().itemId())));
            ids.add(r.job().itemId().toString());
        }
        Map<UUID, Outcome> outcomes = new HashMap<>();
        handlers.processBatch(spec, bodies, ids, timeLeft).forEach((id, outcome) -> outcomes.put(UUID.fromString(id), outcome));
        return outcomes;
    }

    private Outcome callOne(HandlerSpec spec, Received r, Map<UUID, ItemStore.Claimed> claimed, Duration timeLeft) {
        return handlers.process(spec, itemBody(r.job(), claimed.get(r.job().itemId())), r.job().itemId().toString(), timeLeft);
    }

    /** The item as the handler contract shows it (DESIGN 3.3). */
    static ObjectNode itemBody(ItemJob job, ItemStore.Claimed claim) {
        ObjectNode item = Json.object();
        item.put("itemId", job.itemId().toString());
        item.put("runId", job.runId().toString());
        item.put("tenantId", job.tenantId());
        item.put("integrationKey", job.integrationKey());
        item.put("handlerKey", job.handlerKey());
        item.put("direction", job.direction().wireName());
        item.put("externalId", job.externalId());
        item.set("payload", claim.payload());
        item.put("attempt", claim.attempt());
        return item;
    }

    /**
     * Turns outcomes into state: succeeded recorded; retryable failures wait out their backoff as
     * the same message (ChangeMessageVisibility, then listed as failed); final or permanent failures
     * go to the items DLQ, whose consumer stamps dlq_at; handler deferrals are re-sent delayed.
     */
    private BatchResult settle(Map<UUID, Received> byItem, Map<UUID, ItemStore.Claimed> claimed, Map<UUID, Outcome> outcomes,
                               List<Deferral> admissionDeferrals) {
        List<ItemStore.Result> results = new ArrayList<>();
        List<String> failedMessageIds = new ArrayList<>();
        Map<String, List<QueueClient.VisibilityChange>> backoffs = new HashMap<>();
        Map<String, List<OutgoingMessage>> resends = new HashMap<>();
        List<OutgoingMessage> toDlq = new ArrayList<>();
        List<UUID> toDlqIds = new ArrayList<>();
        Set<UUID> endedRuns = new LinkedHashSet<>();
        int maxAttempts = config.retry().maxAttempts();
        for (Deferral deferral : admissionDeferrals) {
            ItemJob job = deferral.received().job();
            resends.computeIfAbsent(config.queues().items(job.trigger()), q -> new ArrayList<>())
                    .add(new OutgoingMessage(Json.write(job.deferred().toJson()), delaySeconds(deferral.delay()), job.tenantId()));
        }
        if (!admissionDeferrals.isEmpty()) {
            LOG.info("deferred", "items", admissionDeferrals.size(), "why", admissionDeferrals.getFirst().reason(),
                    "delaySeconds", delaySeconds(admissionDeferrals.getFirst().delay()));
        }

        for (var entry : outcomes.entrySet()) {
            UUID itemId = entry.getKey();
            Received r = byItem.get(itemId);
            int attempt = claimed.get(itemId).attempt();
            switch (entry.getValue()) {
                case Outcome.Succeeded s -> {
                    results.add(new ItemStore.Result.Succeeded(itemId));
                    endedRuns.add(r.job().runId());
                }
                case Outcome.Failed f when f.retryable() && attempt < maxAttempts -> {
                    results.add(new ItemStore.Result.Retrying(itemId, f.error()));
                    int seconds = (int) Math.min(MAX_VISIBILITY_SECONDS,
                            Math.max(1, Math.ceilDiv(config.retry().backoff(attempt).toMillis(), 1000)));
                    backoffs.computeIfAbsent(queueUrl(r), q -> new ArrayList<>())
                            .add(new QueueClient.VisibilityChange(r.message().receiptHandle(), seconds));
                    failedMessageIds.add(r.message().messageId());
                }
                case Outcome.Failed f -> {
                    String error = f.retryable() ? f.error() + " (attempt " + attempt + " of " + maxAttempts + ")" : f.error();
                    ObjectNode body = r.job().withAttempt(attempt).toJson();
                    body.put("error", error);
                    toDlq.add(OutgoingMessage.of(Json.write(body), r.job().tenantId()));
                    toDlqIds.add(itemId);
                    results.add(new ItemStore.Result.HandedToDlq(itemId, error));
                }
                case Outcome.Deferred d -> {
                    results.add(new ItemStore.Result.Deferred(itemId));
                    resends.computeIfAbsent(config.queues().items(r.job().trigger()), q -> new ArrayList<>())
                            .add(new OutgoingMessage(Json.write(r.job().withAttempt(attempt - 1).deferred().toJson()),
                                    delaySeconds(d.delay()), r.job().tenantId()));
                }
            }
        }
        if (!toDlq.isEmpty()) {
            queues.sendAll(config.queues().itemsDlq(), toDlq);
            LOG.warn("sent to DLQ", "items", toDlq.size());
        }
        // Recorded before the re-sends: a re-sent message that arrives at once must find the item queued, not processing.
        items.record(results);
        resends.forEach(queues::sendAll);
        backoffs.forEach(queues::changeVisibility);
        if (!endedRuns.isEmpty()) {
            runs.completeIfDone(endedRuns);
        }
        return new BatchResult(failedMessageIds);
    }

    /** Whole seconds, rounded up, within SQS's 0..900: an item that comes back early is simply deferred again. */
    static int delaySeconds(Duration delay) {
        long seconds = Math.ceilDiv(Math.max(0, delay.toMillis()), 1000L);
        return (int) Math.min(OutgoingMessage.MAX_DELAY_SECONDS, Math.max(1, seconds));
    }

    /** The queue the message came from, by name; its trigger's tier when the source is unknown. */
    private String queueUrl(Received r) {
        String source = r.message().sourceQueue();
        String tier = config.queues().items(r.job().trigger());
        if (source == null || tier.endsWith("/" + source)) {
            return tier;
        }
        return config.queues().items().values().stream().filter(url -> url.endsWith("/" + source)).findFirst().orElse(tier);
    }
}
