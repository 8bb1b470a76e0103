package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.guard.ConcurrencyAndRate;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.pause.PauseStore;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;
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
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Processes one SQS batch of items (docs/item-lifecycle.md), as its steps: parse, group by handler,
 * park what is paused or disabled, admit (Redis), claim (Postgres), call the handlers, report
 * (Redis), then settle: {@link Settlement} decides what every fate means and this class carries the
 * plan out. What one all-success batch costs: 3 Postgres statements (claim, record, complete), one
 * handler call per {@code batch_size} items for batch handlers, one Redis round trip (admit; a
 * report only when there is something to report), no SQS request of its own (receive and delete
 * belong to the event source mapping).
 *
 * <p>A handler group's failure, however it fails, becomes retryable failures of that group's
 * items: the other groups' outcomes are recorded all the same. Handler calls end by the
 * invocation's deadline less what recording needs, so the batch always settles in time.
 */
public final class ItemWorker {

    private static final Log LOG = Log.of(ItemWorker.class);
    /** What recording a batch's outcomes may take after its handler calls. */
    private static final long RECORD_RESERVE_MS = 5_000;

    /** Message ids the event source must not delete: they come back after their visibility timeout. */
    public record BatchResult(List<String> failedMessageIds) {}

    private record Group(String integrationKey, String handlerKey) {
        HandlerRef ref() {
            return new HandlerRef(integrationKey, handlerKey);
        }
    }

    private final RunnerConfig config;
    private final Settlement settlement;
    private final ItemStore items;
    private final PauseStore pauses;
    private final RunStore runs;
    private final Integrations integrations;
    private final HandlerClient handlers;
    private final QueueClient queues;
    private final DeadLetterStore deadLetters;
    private final Guard guard;
    private final Metrics metrics;
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();
    private final CallTimes callTimes = new CallTimes();

    public ItemWorker(RunnerConfig config, ItemStore items, PauseStore pauses, RunStore runs, Integrations integrations,
                      HandlerClient handlers, QueueClient queues, DeadLetterStore deadLetters, Guard guard, Metrics metrics) {
        this.config = config;
        this.settlement = new Settlement(config.retry(), config.queues());
        this.items = items;
        this.pauses = pauses;
        this.runs = runs;
        this.integrations = integrations;
        this.handlers = handlers;
        this.queues = queues;
        this.deadLetters = deadLetters;
        this.guard = guard;
        this.metrics = metrics;
    }

    /** @param remainingMillis the invocation's time left: handler calls never outlive it */
    public BatchResult process(List<QueueMessage> messages, LongSupplier remainingMillis) {
        long callDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1_000, remainingMillis.getAsLong() - RECORD_RESERVE_MS));
        List<Fate> fates = new ArrayList<>();
        Map<UUID, Item> byItem = new LinkedHashMap<>();
        for (Item item : parse(messages)) {
            if (byItem.putIfAbsent(item.itemId(), item) != null) {
                fates.add(new Fate.Skipped(item)); // the same item twice in one batch: one delivery is enough
            }
        }
        if (byItem.isEmpty()) {
            return new BatchResult(List.of());
        }
        Map<Group, List<Item>> groups = group(byItem.values());
        Map<Group, HandlerSpec> specs = new HashMap<>();
        groups.keySet().forEach(g -> integrations.handlerOrRefresh(g.integrationKey(), g.handlerKey()).ifPresent(spec -> specs.put(g, spec)));

        parkDisabled(groups, fates);
        Admitted admitted = admit(groups, specs, fates, callDeadline, remainingMillis);
        Calls calls = new Calls(List.of(), List.of());
        ItemStore.Claim claim = new ItemStore.Claim(Map.of(), Map.of());
        try {
            // Inside the try: whatever fails from here on (Postgres at park or claim, a call), the leases go back.
            admitted.paused().forEach((group, members) -> park(group, members, fates));
            claim = items.claim(admitted.itemIds(), config.itemClaimLease());
            Map<Group, List<Item>> toCall = new LinkedHashMap<>();
            for (var entry : groups.entrySet()) {
                for (Item item : entry.getValue()) {
                    if (!admitted.itemIds().contains(item.itemId())) {
                        continue;
                    }
                    if (claim.claimed().containsKey(item.itemId())) {
                        toCall.computeIfAbsent(entry.getKey(), g -> new ArrayList<>()).add(item);
                    } else if (claim.early().containsKey(item.itemId())) {
                        // Its message came back before the item was due: keep it alive, at its time, not twice now.
                        fates.add(new Fate.Deferred(item, claim.early().get(item.itemId()), Reason.NOT_DUE));
                    } else {
                        fates.add(new Fate.Skipped(item));
                    }
                }
            }
            calls = callHandlers(toCall, specs, admitted, claim.claimed(), callDeadline);
        } finally {
            // Leases are given back even when a call crashed, or a low-concurrency handler would stall until they expire.
            report(admitted, calls.results());
        }
        Map<UUID, ItemStore.Claimed> claimed = claim.claimed();
        for (CallResult result : calls.results()) {
            result.outcomes().forEach((itemId, outcome) ->
                    fates.add(new Fate.Called(byItem.get(itemId), claimed.get(itemId).attempt(), outcome)));
        }
        fates.addAll(calls.uncalled());
        Set<String> tenants = new LinkedHashSet<>();
        byItem.values().forEach(item -> tenants.add(item.job().tenantId()));
        return carryOut(settlement.plan(fates), tenants);
    }

    /** Items of one handler, most urgent first: admission serves them in this order. */
    private static Map<Group, List<Item>> group(Collection<Item> received) {
        Map<Group, List<Item>> groups = new LinkedHashMap<>();
        received.stream()
                .sorted(Comparator.comparingInt(r -> r.job().trigger().priority()))
                .forEach(r -> groups.computeIfAbsent(new Group(r.job().integrationKey(), r.job().handlerKey()), g -> new ArrayList<>()).add(r));
        return groups;
    }

    /**
     * Items of tenant integrations that are disabled are parked, as a pause parks them: disabling
     * an integration stops its items until it is enabled again. The check reads a short-lived cache;
     * Postgres, which the park statement asks, has the last word.
     */
    private void parkDisabled(Map<Group, List<Item>> groups, List<Fate> fates) {
        Map<List<String>, List<Item>> byTenant = new LinkedHashMap<>();
        groups.values().forEach(members -> members.forEach(item ->
                byTenant.computeIfAbsent(List.of(item.job().tenantId(), item.job().integrationKey()), k -> new ArrayList<>()).add(item)));
        Set<UUID> parked = new LinkedHashSet<>();
        byTenant.forEach((key, members) -> {
            Optional<TenantIntegration> tenant = integrations.tenantIntegrationCached(key.get(0), key.get(1));
            if (tenant.isPresent() && !tenant.get().enabled()) {
                parked.addAll(pauses.parkDisabled(members.stream().map(Item::itemId).toList(), key.get(0), key.get(1)));
            }
        });
        if (parked.isEmpty()) {
            return;
        }
        groups.values().forEach(members -> members.removeIf(item -> {
            if (parked.contains(item.itemId())) {
                fates.add(new Fate.Parked(item));
                return true;
            }
            return false;
        }));
        groups.values().removeIf(List::isEmpty);
        LOG.info("parked", "items", parked.size(), "why", "tenant integration disabled");
    }

    /**
     * What admission let through: the items, per group the admission itself (its leases, the lanes
     * they allow, the time its rate entries carry), and the items to park (paused handlers).
     */
    private record Admitted(Set<UUID> itemIds, Map<Group, GroupAdmission> byGroup, Map<Group, List<Item>> paused,
                            Set<String> leasesReleased) {
        Admitted(Set<UUID> itemIds, Map<Group, GroupAdmission> byGroup, Map<Group, List<Item>> paused) {
            this(itemIds, byGroup, paused, ConcurrentHashMap.newKeySet());
        }

        /** The group's leases still held: those its lanes did not give back early. */
        List<String> leasesHeld(GroupAdmission admission) {
            return admission.leaseTokens().stream().filter(token -> !leasesReleased.contains(token)).toList();
        }
    }

    /**
     * One pipelined Redis round trip decides every group's items: admitted, deferred (with the
     * computed delay: a fate of its own) or paused (parked in Postgres, no SQS traffic). A group
     * that found no concurrency lease free waits for one to be given back (woken by the lease's
     * ring, see {@link Guard#awaitLease}), in this invocation, when one is expected back soon
     * ({@code RUNNER_LANE_WAIT_MS}) and leaves time to call: the handler stays at its limit without
     * the batch going back to SQS. Items of an unknown handler
     * skip admission and fail permanently after their claim.
     */
    private Admitted admit(Map<Group, List<Item>> groups, Map<Group, HandlerSpec> specs, List<Fate> fates,
                           long callDeadline, LongSupplier remainingMillis) {
        Set<UUID> admittedIds = new LinkedHashSet<>();
        Map<Group, GroupAdmission> byGroup = new LinkedHashMap<>();
        Map<Group, List<Item>> asking = new LinkedHashMap<>();
        for (var entry : groups.entrySet()) {
            if (specs.containsKey(entry.getKey())) {
                asking.put(entry.getKey(), entry.getValue());
            } else {
                entry.getValue().forEach(item -> admittedIds.add(item.itemId()));
            }
        }
        Map<Group, List<Item>> paused = new LinkedHashMap<>();
        Set<Group> failedOpen = new LinkedHashSet<>();
        long waitUntil = System.nanoTime() + config.laneWait().toNanos();
        while (!asking.isEmpty()) {
            Map<String, Item> byId = new HashMap<>();
            List<GroupRequest> requests = new ArrayList<>();
            asking.forEach((group, members) -> {
                members.forEach(item -> byId.put(item.itemId().toString(), item));
                requests.add(request(group, specs.get(group), members, remainingMillis));
            });
            Map<Group, List<Item>> waiting = new LinkedHashMap<>();
            long soonest = Long.MAX_VALUE;
            for (GroupAdmission admission : guard.admit(requests)) {
                Group group = new Group(admission.request().integrationKey(), admission.request().handlerKey());
                if (admission.failedOpen()) {
                    failedOpen.add(group);
                }
                for (Admission decision : admission.decisions()) {
                    Item item = byId.get(decision.itemId());
                    switch (decision) {
                        case Admission.Admitted a -> {
                            admittedIds.add(item.itemId());
                            byGroup.put(group, admission);
                        }
                        case Admission.Deferred d when d.reason() == DeferReason.HANDLER_CONCURRENCY
                                && canWait(d.delay(), waitUntil, callDeadline, group, specs.get(group)) -> {
                            waiting.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                            soonest = Math.min(soonest, d.delay().toNanos());
                        }
                        case Admission.Deferred d -> fates.add(new Fate.Deferred(item, d.delay(), Reason.valueOf(d.reason().name())));
                        case Admission.Paused p -> paused.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                    }
                }
            }
            long waitNanos = Math.max(0, waitUntil - System.nanoTime());
            if (waiting.size() == 1) {
                // One handler to wait for (the usual case): woken by the first lease it gives back.
                Group group = waiting.keySet().iterator().next();
                guard.awaitLease(group.integrationKey(), group.handlerKey(), Duration.ofNanos(waitNanos));
            } else if (!waiting.isEmpty()) {
                // Several: the lease expected back first, asked again then, not before (each try is a round trip).
                LockSupport.parkNanos(Math.min(soonest, waitNanos));
            }
            asking = waiting;
        }
        // Redis away: admission could not see pauses, so Postgres, which holds them, is asked.
        for (HandlerRef ref : pauses.pausedAmong(failedOpen.stream().map(Group::ref).toList())) {
            Group group = new Group(ref.integrationKey(), ref.handlerKey());
            for (Item item : groups.get(group)) {
                if (admittedIds.remove(item.itemId())) {
                    paused.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                }
            }
        }
        return new Admitted(admittedIds, byGroup, paused);
    }

    /** Waiting in this invocation is worth it: the lease is expected back soon, and calls would still fit after it. */
    private boolean canWait(Duration delay, long waitUntil, long callDeadline, Group group, HandlerSpec spec) {
        long backAt = System.nanoTime() + delay.toNanos();
        Duration timeout = Duration.ofMillis(spec.configs().timeoutMs());
        return backAt <= waitUntil && backAt + 2 * callTimes.expected(group.ref(), timeout).toNanos() < callDeadline;
    }

    private GroupRequest request(Group group, HandlerSpec spec, List<Item> members, LongSupplier remainingMillis) {
        List<Candidate> candidates = new ArrayList<>(members.size());
        members.forEach(item -> candidates.add(new Candidate(item.itemId().toString(), item.job().tenantId(), item.job().trigger().priority(),
                item.job().tenantSlotAt())));
        Duration timeout = Duration.ofMillis(spec.configs().timeoutMs());
        return new GroupRequest(group.integrationKey(), group.handlerKey(),
                new ConcurrencyAndRate(spec.configs().concurrency(), spec.configs().ratePerMinute()), candidates,
                spec.batch() ? spec.configs().batchSize() : 1, callTimes.expected(group.ref(), timeout),
                Duration.ofMillis(Math.max(0, remainingMillis.getAsLong())));
    }

    private void park(Group group, List<Item> members, List<Fate> fates) {
        Set<UUID> parked = pauses.park(members.stream().map(Item::itemId).toList(), group.ref());
        if (parked.isEmpty() && !pauses.isPaused(group.ref())) {
            // Redis says paused, Postgres (the truth) no longer: a resume whose mirror update failed. Heal it.
            try {
                guard.setPaused(group.integrationKey(), group.handlerKey(), false);
            } catch (RuntimeException e) {
                LOG.warn("stale pause flag not cleared", "integrationKey", group.integrationKey(), "error", e);
            }
        }
        for (Item item : members) {
            // Resumed meanwhile, or not parkable now: it must not be dropped, so it waits briefly.
            fates.add(parked.contains(item.itemId()) ? new Fate.Parked(item)
                    : new Fate.Deferred(item, config.tenantLimit().shortestDeferral(), Reason.PAUSED_RACE));
        }
        if (!parked.isEmpty()) {
            LOG.info("parked", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(), "items", parked.size());
        }
    }

    /**
     * The breaker hears one outcome per handler call (a failed /process-batch is one failure, not
     * ten: it is one look at the endpoint), and every lease admission granted goes back, whether
     * its items were called, skipped at claim, left unstarted or failed. One round trip.
     */
    private void report(Admitted admitted, List<CallResult> results) {
        Map<Group, List<GroupReport.Call>> calls = new LinkedHashMap<>();
        admitted.byGroup().keySet().forEach(group -> calls.put(group, new ArrayList<>()));
        for (CallResult result : results) {
            if (result.observation() == Observation.NONE) {
                continue;
            }
            List<String> itemIds = result.outcomes().keySet().stream().map(UUID::toString).toList();
            GroupAdmission admission = admitted.byGroup().get(result.group());
            calls.computeIfAbsent(result.group(), g -> new ArrayList<>()).add(new GroupReport.Call(itemIds,
                    result.observation() == Observation.UP, admission == null ? List.of() : admission.tenantsOf(Set.copyOf(itemIds))));
        }
        List<GroupReport> reports = new ArrayList<>();
        calls.forEach((group, groupCalls) -> {
            GroupAdmission admission = admitted.byGroup().get(group);
            // Steady state: successes on a clean breaker are not told (with leases to give back, the
            // report only gives them back, and need not read the breaker), and with no lease they need
            // no round trip at all. (Failures another worker counts meanwhile are then not reset by
            // these successes: the breaker may open one success earlier, the safe side.)
            List<String> leases = admission == null ? List.of() : admitted.leasesHeld(admission);
            boolean successesChangeNothing = admission != null && admission.breakerClean()
                    && groupCalls.stream().allMatch(GroupReport.Call::up);
            if (successesChangeNothing && leases.isEmpty()) {
                return;
            }
            // Only items that may hold a probe (the breaker was not clean) or an urgent marker need naming.
            List<String> admittedIds = admission == null ? List.of() : admission.request().items().stream()
                    .filter(c -> !admission.breakerClean() || c.priority() <= Guard.URGENT_PRIORITY)
                    .map(Candidate::itemId).filter(id -> admitted.itemIds().contains(UUID.fromString(id))).toList();
            reports.add(new GroupReport(group.integrationKey(), group.handlerKey(), successesChangeNothing ? List.of() : groupCalls,
                    leases, admittedIds));
        });
        if (!reports.isEmpty()) {
            guard.report(reports);
        }
    }

    private List<Item> parse(List<QueueMessage> messages) {
        List<Item> received = new ArrayList<>(messages.size());
        List<DeadLetterStore.DeadLetter> unreadable = new ArrayList<>();
        for (QueueMessage message : messages) {
            try {
                received.add(new Item(message, ItemJob.fromJson(Json.parse(message.body()))));
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

        /** Every item of the call failed alike, retryably: a crash or a missed deadline, not an answer. */
        static CallResult failed(Group group, List<Item> members, String error) {
            Map<UUID, Outcome> outcomes = new HashMap<>();
            members.forEach(item -> outcomes.put(item.itemId(), new Outcome.Failed(error, true)));
            return new CallResult(group, outcomes, Observation.DOWN);
        }
    }

    /** What the calls of a batch came to: their results, and the claimed items no call was made for. */
    private record Calls(List<CallResult> results, List<Fate> uncalled) {}

    /**
     * Every group's calls at once, each group through its lanes (as many calls in flight as its
     * leases allow; every call at once when its handler has no concurrency limit); a handler sees
     * batches of its batch_size, or one call per item. Each call is isolated: whatever it throws,
     * and a call still running at the deadline, ends as retryable failures of its own items only.
     */
    private Calls callHandlers(Map<Group, List<Item>> groups, Map<Group, HandlerSpec> specs, Admitted admitted,
                               Map<UUID, ItemStore.Claimed> claimed, long deadlineNanos) {
        List<CallResult> results = new ArrayList<>();
        List<Fate> uncalled = new ArrayList<>();
        Map<Group, Future<Lanes.Ran<List<Item>, CallResult>>> running = new LinkedHashMap<>();
        Map<Group, List<Item>> called = new LinkedHashMap<>();
        for (var entry : groups.entrySet()) {
            Group group = entry.getKey();
            HandlerSpec spec = specs.get(group);
            List<Item> members = new ArrayList<>();
            Map<UUID, Outcome> settledHere = new HashMap<>();
            for (Item item : entry.getValue()) {
                int attempt = claimed.get(item.itemId()).attempt();
                if (attempt > config.retry().maxAttempts()) {
                    // Reclaimed after a crash past its last attempt: the DLQ, not another call.
                    uncalled.add(new Fate.Exhausted(item, attempt));
                } else if (spec == null) {
                    settledHere.put(item.itemId(), new Outcome.Failed("unknown handler " + group.integrationKey() + "/" + group.handlerKey(), false));
                } else {
                    members.add(item);
                }
            }
            if (!settledHere.isEmpty()) {
                results.add(new CallResult(group, settledHere, Observation.NONE));
            }
            if (members.isEmpty()) {
                continue;
            }
            called.put(group, members);
            int size = spec.batch() ? spec.configs().batchSize() : 1;
            List<List<Item>> chunks = new ArrayList<>();
            for (int from = 0; from < members.size(); from += size) {
                chunks.add(List.copyOf(members.subList(from, Math.min(members.size(), from + size))));
            }
            GroupAdmission admission = admitted.byGroup().get(group);
            int lanes = admission == null ? chunks.size() : admission.lanes(chunks.size());
            Duration expected = callTimes.expected(group.ref(), Duration.ofMillis(spec.configs().timeoutMs()));
            running.put(group, calls.submit(() -> lanes().run(chunks, lanes, expected, deadlineNanos,
                    new GroupCaller(group, spec, claimed, admission, admitted.leasesReleased()))));
        }
        running.forEach((group, future) -> {
            Lanes.Ran<List<Item>, CallResult> ran = ran(future, called.get(group), group);
            results.addAll(ran.results());
            List<Item> left = ran.unstarted().stream().flatMap(List::stream).toList();
            if (left.isEmpty()) {
                return;
            }
            Duration delay = ran.stoppedByFailure() ? config.retry().backoff(1) : config.tenantLimit().shortestDeferral();
            Reason reason = ran.stoppedByFailure() ? Reason.HANDLER_FAILING : Reason.OUT_OF_TIME;
            left.forEach(item -> uncalled.add(new Fate.Unstarted(item, claimed.get(item.itemId()).attempt(), delay, reason)));
            GroupAdmission admission = admitted.byGroup().get(group);
            if (admission != null) {
                guard.giveBack(admission, left.stream().map(item -> item.itemId().toString()).toList());
            }
            LOG.info("lanes stopped", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(),
                    "unstarted", left.size(), "why", reason.wireName());
        });
        return new Calls(results, uncalled);
    }

    /** A group's lanes as they ended; should they fail in Runner itself (a bug), every call of the group failed retryably. */
    private static Lanes.Ran<List<Item>, CallResult> ran(Future<Lanes.Ran<List<Item>, CallResult>> future, List<Item> members, Group group) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Lanes.Ran<>(List.of(CallResult.failed(group, members, "interrupted before the handler answered")), List.of(), false);
        } catch (ExecutionException e) {
            LOG.error("lanes crashed", "integrationKey", group.integrationKey(), "error", e.getCause());
            return new Lanes.Ran<>(List.of(CallResult.failed(group, members, "handler call failed in Runner: "
                    + e.getCause().getClass().getSimpleName())), List.of(), false);
        }
    }

    private Lanes<List<Item>, CallResult> lanes() {
        return new Lanes<>(calls, System::nanoTime);
    }

    /** One group's calls, as its lanes make them. */
    private final class GroupCaller implements Lanes.Call<List<Item>, CallResult> {
        private final Group group;
        private final HandlerSpec spec;
        private final Map<UUID, ItemStore.Claimed> claimed;
        /** Null when the group skipped admission (unknown handler). */
        private final GroupAdmission admission;
        private final Set<String> leasesReleased;

        GroupCaller(Group group, HandlerSpec spec, Map<UUID, ItemStore.Claimed> claimed, GroupAdmission admission,
                    Set<String> leasesReleased) {
            this.group = group;
            this.spec = spec;
            this.claimed = claimed;
            this.admission = admission;
            this.leasesReleased = leasesReleased;
        }

        /** A lane out of calls gives its lease back now, for a worker waiting on this handler; the last one goes with the report. */
        @Override
        public void laneFreed(int lane) {
            if (admission == null || lane >= admission.leaseTokens().size()) {
                return;
            }
            String token = admission.leaseTokens().get(lane);
            if (guard.releaseLease(admission, token)) {
                leasesReleased.add(token);
            }
        }

        @Override
        public CallResult call(List<Item> chunk, Duration timeLeft) {
            long start = System.nanoTime();
            CallResult result = ItemWorker.this.call(group, spec, chunk, claimed, timeLeft);
            callTimes.observed(group.ref(), System.nanoTime() - start);
            return result;
        }

        @Override
        public boolean endpointDown(CallResult result) {
            return result.observation() == Observation.DOWN;
        }

        @Override
        public CallResult late(List<Item> chunk) {
            return CallResult.failed(group, chunk, "no answer before the invocation's deadline");
        }
    }

    private CallResult call(Group group, HandlerSpec spec, List<Item> chunk, Map<UUID, ItemStore.Claimed> claimed, Duration timeLeft) {
        try {
            if (spec.batch()) {
                List<ObjectNode> bodies = new ArrayList<>(chunk.size());
                List<String> ids = new ArrayList<>(chunk.size());
                for (Item item : chunk) {
                    bodies.add(itemBody(item.job(), claimed.get(item.itemId())));
                    ids.add(item.itemId().toString());
                }
                Map<UUID, Outcome> outcomes = new HashMap<>();
                handlers.processBatch(group.integrationKey(), spec, bodies, ids, timeLeft).forEach((id, outcome) -> outcomes.put(UUID.fromString(id), outcome));
                return CallResult.of(group, outcomes);
            }
            Item item = chunk.getFirst();
            Outcome outcome = handlers.process(group.integrationKey(), spec, itemBody(item.job(), claimed.get(item.itemId())), item.itemId().toString(), timeLeft);
            return CallResult.of(group, Map.of(item.itemId(), outcome));
        } catch (RuntimeException e) {
            LOG.error("handler call crashed", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(), "error", e);
            return CallResult.failed(group, chunk, "handler call failed in Runner: " + e.getClass().getSimpleName());
        }
    }

    /** The item as the handler contract shows it (docs/handler-contract.md). */
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
     * The plan, in its order (see {@link Settlement.Plan}). A re-send that fails leaves its item's
     * original message undeleted (listed as failed), so it comes back rather than being lost.
     */
    private BatchResult carryOut(Settlement.Plan plan, Set<String> tenants) {
        if (!plan.toDlq().isEmpty()) {
            queues.sendAll(config.queues().itemsDlq(), plan.toDlq());
            LOG.warn("sent to DLQ", "items", plan.toDlq().size());
        }
        items.record(plan.results());
        List<String> failed = new ArrayList<>(plan.failedMessageIds());
        plan.resends().forEach((queueUrl, resends) -> {
            try {
                queues.sendAll(queueUrl, resends.stream().map(Settlement.Resend::message).toList());
            } catch (RuntimeException e) {
                LOG.warn("re-send failed; the original messages come back instead", "items", resends.size(), "error", e);
                resends.forEach(resend -> failed.add(resend.originalMessageId()));
            }
        });
        plan.backoffs().forEach(queues::changeVisibility);
        if (!plan.runsToCheck().isEmpty()) {
            runs.completeIfDone(plan.runsToCheck());
        }
        Settlement.Tally tally = plan.tally();
        if (tally.deferredTotal() > 0) {
            LOG.info("deferred", "items", tally.deferredTotal(), "why", tally.deferred().keySet().stream().map(Reason::wireName).toList());
        }
        Map<String, Integer> deferred = new LinkedHashMap<>();
        tally.deferred().forEach((reason, count) -> deferred.put(reason.wireName(), count));
        metrics.itemsSettled(new Metrics.ItemBatch(tally.succeeded(), tally.retried(), tally.parked(), deferred, tenants));
        return new BatchResult(failed);
    }
}
