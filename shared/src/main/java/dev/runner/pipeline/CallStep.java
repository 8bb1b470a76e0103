package dev.runner.pipeline;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.callback.CallbackUrls;
import dev.runner.config.RunnerConfig;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupReport;
import dev.runner.guard.Guard;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.CallResult.Observation;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The calling step of {@link ItemWorker}: every group's calls at once, each group through its
 * {@link Lanes} (as many calls in flight as its leases allow; every call at once when its handler
 * has no concurrency limit); a handler sees batches of its batch_size, or one call per item. Each
 * call is isolated: whatever it throws, and a call still running at the deadline, ends as
 * retryable failures of its own items only. A batch of several tenants' items that fails as a
 * whole is called again split by tenant, in the same attempt and lane, so the failure is charged
 * to the tenant whose items fail and the others' items are served ({@link TenantSplit}). Then the
 * report to the guard ({@link CallReport}).
 */
public final class CallStep {

    private static final Log LOG = Log.of(CallStep.class);

    /** What the calls of a batch came to: their results, and the claimed items no call was made for. */
    record BatchCalls(List<CallResult> results, List<Fate> uncalled) {
        static final BatchCalls NONE = new BatchCalls(List.of(), List.of());
    }

    private final HandlerClient handlers;
    private final Guard guard;
    private final CallTimes callTimes;
    private final RunnerConfig.Retry retry;
    private final Duration outOfTimeDelay;
    private final CallbackUrls callbacks;
    private final ExecutorService laneThreads = Executors.newVirtualThreadPerTaskExecutor();

    /**
     * @param outOfTimeDelay how long an item waits whose lane ran out of the invocation's time
     * @param callbacks      the items' callback URLs (docs/handler-contract.md, callbacks)
     */
    public CallStep(HandlerClient handlers, Guard guard, CallTimes callTimes, RunnerConfig.Retry retry, Duration outOfTimeDelay,
                    CallbackUrls callbacks) {
        this.handlers = handlers;
        this.guard = guard;
        this.callTimes = callTimes;
        this.retry = retry;
        this.outOfTimeDelay = outOfTimeDelay;
        this.callbacks = callbacks;
    }

    BatchCalls call(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, Admitted admitted,
                    Map<UUID, ItemStore.Claimed> claimed, long deadlineNanos) {
        List<CallResult> results = new ArrayList<>();
        List<Fate> uncalled = new ArrayList<>();
        Map<HandlerRef, Future<Lanes.Ran<List<Item>, List<CallResult>>>> running = new LinkedHashMap<>();
        Map<HandlerRef, List<Item>> called = new LinkedHashMap<>();
        for (var entry : groups.entrySet()) {
            HandlerRef group = entry.getKey();
            HandlerSpec spec = specs.get(group);
            List<Item> members = new ArrayList<>();
            Map<UUID, Outcome> settledHere = new HashMap<>();
            for (Item item : entry.getValue()) {
                int attempt = claimed.get(item.itemId()).attempt();
                if (attempt > retry.maxAttempts()) {
                    // Reclaimed after a crash past its last attempt: the DLQ, not another call.
                    uncalled.add(new Fate.Exhausted(item, attempt));
                } else if (spec == null) {
                    settledHere.put(item.itemId(), new Outcome.Failed("unknown handler " + group, false));
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
            GroupAdmission admission = admitted.byGroup().get(group);
            Duration expected = callTimes.expected(group, Duration.ofMillis(spec.configs().timeoutMs()));
            running.put(group, laneThreads.submit(() -> runLanes(group, spec, members, admission, admitted, claimed, expected, deadlineNanos)));
        }
        running.forEach((group, future) -> {
            Lanes.Ran<List<Item>, List<CallResult>> ran = ran(future, called.get(group), group);
            ran.results().forEach(results::addAll);
            List<Item> left = ran.unstarted().stream().flatMap(List::stream).toList();
            List<Item> held = new ArrayList<>();
            // Calls into a scope the partner asked to wait: not made; they wait out its Retry-After, no attempt used.
            ran.heldOff().forEach((chunk, wait) -> chunk.forEach(item -> {
                held.add(item);
                uncalled.add(new Fate.Unstarted(item, claimed.get(item.itemId()).attempt(), wait, Reason.ADAPTIVE_STOP));
            }));
            Duration delay = ran.stoppedByFailure() ? retry.backoff(1) : outOfTimeDelay;
            Reason reason = ran.stoppedByFailure() ? Reason.HANDLER_FAILING : Reason.OUT_OF_TIME;
            left.forEach(item -> uncalled.add(new Fate.Unstarted(item, claimed.get(item.itemId()).attempt(), delay, reason)));
            GroupAdmission admission = admitted.byGroup().get(group);
            if (admission != null && (!left.isEmpty() || !held.isEmpty())) {
                guard.giveBack(admission, java.util.stream.Stream.concat(left.stream(), held.stream())
                        .map(item -> item.itemId().toString()).toList());
            }
            if (!left.isEmpty()) {
                LOG.info("lanes stopped", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(),
                        "unstarted", left.size(), "why", reason.wireName());
            }
        });
        return new BatchCalls(results, uncalled);
    }

    /**
     * A group's calls through its lanes: one set of lanes on all its leases; or, while tenants
     * compete for the handler ({@link GroupAdmission#tenantLanes}), each tenant's calls on its own
     * leases, the tenants' lanes side by side, so a lease runs one tenant's calls only.
     */
    private Lanes.Ran<List<Item>, List<CallResult>> runLanes(HandlerRef group, HandlerSpec spec, List<Item> members, GroupAdmission admission,
                                                             Admitted admitted, Map<UUID, ItemStore.Claimed> claimed, Duration expected,
                                                             long deadlineNanos) {
        int perCall = spec.batch() ? spec.configs().batchSize() : 1;
        if (admission == null || !admission.tenantLanes()) {
            List<List<Item>> chunks = chunks(members, perCall);
            List<String> tokens = admission == null ? List.of() : admission.leaseTokens();
            int lanes = admission == null ? chunks.size() : admission.lanes(chunks.size());
            return new Lanes<List<Item>, List<CallResult>>(laneThreads, System::nanoTime)
                    .run(chunks, lanes, expected, deadlineNanos, new GroupCaller(group, spec, claimed, admitted, tokens));
        }
        Map<String, List<Item>> byTenant = new LinkedHashMap<>();
        members.forEach(item -> byTenant.computeIfAbsent(item.job().tenantId(), t -> new ArrayList<>()).add(item));
        List<Future<Lanes.Ran<List<Item>, List<CallResult>>>> tenants = new ArrayList<>();
        byTenant.forEach((tenant, items) -> {
            List<String> tokens = admission.leaseTokens().stream().filter(token -> tenant.equals(GroupAdmission.tenantOfLease(token))).toList();
            List<List<Item>> chunks = chunks(items, perCall);
            tenants.add(laneThreads.submit(() -> new Lanes<List<Item>, List<CallResult>>(laneThreads, System::nanoTime).run(chunks,
                    Math.max(1, Math.min(chunks.size(), tokens.size())), expected, deadlineNanos,
                    new GroupCaller(group, spec, claimed, admitted, tokens))));
        });
        List<List<CallResult>> results = new ArrayList<>();
        List<List<Item>> unstarted = new ArrayList<>();
        Map<List<Item>, Duration> heldOff = new LinkedHashMap<>();
        boolean stopped = false;
        for (Future<Lanes.Ran<List<Item>, List<CallResult>>> tenant : tenants) {
            Lanes.Ran<List<Item>, List<CallResult>> ran;
            try {
                ran = tenant.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while a tenant's lanes ran", e);
            } catch (ExecutionException e) {
                throw new IllegalStateException("a tenant's lanes crashed", e.getCause());
            }
            results.addAll(ran.results());
            unstarted.addAll(ran.unstarted());
            heldOff.putAll(ran.heldOff());
            stopped |= ran.stoppedByFailure();
        }
        return new Lanes.Ran<>(results, unstarted, stopped, heldOff);
    }

    /**
     * Tells the guard what the calls saw and gives every lease back, whether its items were called,
     * skipped at claim, left unstarted or failed; nothing when there is nothing to tell. One round trip.
     */
    void report(Admitted admitted, List<CallResult> results) {
        List<GroupReport> reports = CallReport.of(admitted, results);
        if (!reports.isEmpty()) {
            guard.report(reports);
        }
    }

    /** The calls of one group: {@code size} items each, in order. */
    static List<List<Item>> chunks(List<Item> members, int size) {
        List<List<Item>> chunks = new ArrayList<>();
        for (int from = 0; from < members.size(); from += size) {
            chunks.add(List.copyOf(members.subList(from, Math.min(members.size(), from + size))));
        }
        return chunks;
    }

    /** A group's lanes as they ended; should they fail in Runner itself (a bug), every call of the group failed retryably. */
    private static Lanes.Ran<List<Item>, List<CallResult>> ran(Future<Lanes.Ran<List<Item>, List<CallResult>>> future, List<Item> members,
                                                               HandlerRef group) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Lanes.Ran<>(List.of(List.of(CallResult.failed(group, members, "interrupted before the handler answered"))), List.of(), false);
        } catch (ExecutionException e) {
            LOG.error("lanes crashed", "integrationKey", group.integrationKey(), "error", e.getCause());
            return new Lanes.Ran<>(List.of(List.of(CallResult.failed(group, members, "handler call failed in Runner: "
                    + e.getCause().getClass().getSimpleName()))), List.of(), false);
        }
    }

    /** One group's calls, as its lanes make them: one call's results (several when a mixed batch was split by tenant). */
    private final class GroupCaller implements Lanes.Call<List<Item>, List<CallResult>> {
        private final HandlerRef group;
        private final HandlerSpec spec;
        private final Map<UUID, ItemStore.Claimed> claimed;
        /** Null when the group skipped admission (unknown handler). */
        private final GroupAdmission admission;
        /** The leases these lanes run on, lane by lane. */
        private final List<String> tokens;
        private final Set<String> leasesReleased;
        /** Tenants whose scope the partner asked to wait in this batch, until when (System.nanoTime). */
        private final Map<String, Long> stoppedUntil = new java.util.concurrent.ConcurrentHashMap<>();

        GroupCaller(HandlerRef group, HandlerSpec spec, Map<UUID, ItemStore.Claimed> claimed, Admitted admitted, List<String> tokens) {
            this.group = group;
            this.spec = spec;
            this.claimed = claimed;
            this.admission = admitted.byGroup().get(group);
            this.tokens = tokens;
            this.leasesReleased = admitted.leasesReleased();
        }

        /** A lane out of calls gives its lease back now, for a worker waiting on this handler; the last one goes with the report. */
        @Override
        public void laneFreed(int lane) {
            if (admission == null || lane >= tokens.size()) {
                return;
            }
            String token = tokens.get(lane);
            if (guard.releaseLease(admission, token)) {
                leasesReleased.add(token);
            }
        }

        /** A call whose tenant's scope was asked to wait by an earlier answer of this batch is not made before the wait is over. */
        @Override
        public Duration holdOff(List<Item> chunk) {
            long now = System.nanoTime();
            long until = chunk.stream().mapToLong(item -> stoppedUntil.getOrDefault(item.job().tenantId(), 0L)).max().orElse(0);
            return until > now ? Duration.ofNanos(until - now) : null;
        }

        @Override
        public List<CallResult> call(List<Item> chunk, Duration timeLeft) {
            long start = System.nanoTime();
            CallResult result = callHandler(group, spec, chunk, claimed, timeLeft);
            callTimes.observed(group, System.nanoTime() - start);
            if (result.observed() == GroupReport.Observed.THROTTLED) {
                throttled(chunk, result);
            }
            if (!TenantSplit.wanted(result, chunk)) {
                return List.of(result);
            }
            long deadline = start + timeLeft.toNanos();
            return TenantSplit.callEachTenant(result, chunk, part -> {
                long left = deadline - System.nanoTime();
                return left < TenantSplit.SHORTEST_PART.toNanos() ? null
                        : callHandler(group, spec, part, claimed, Duration.ofNanos(left));
            });
        }

        /**
         * The partner asked this call's scope to wait: this batch's further calls of its tenants wait
         * it out, and every other worker hears it now ({@link Guard#throttled}), once per tenant.
         */
        private void throttled(List<Item> chunk, CallResult result) {
            long until = System.nanoTime() + Duration.ofMillis(result.retryAfterMs()).toNanos();
            List<String> tenants = chunk.stream().map(item -> item.job().tenantId()).distinct().toList();
            boolean first = false;
            for (String tenant : tenants) {
                first |= stoppedUntil.put(tenant, until) == null;
            }
            if (first && admission != null) {
                guard.throttled(admission, new GroupReport.Call(result.outcomes().keySet().stream().map(UUID::toString).toList(),
                        GroupReport.Observed.THROTTLED, tenants, result.retryAfterMs()));
            }
        }

        @Override
        public boolean endpointDown(List<CallResult> results) {
            return results.stream().allMatch(result -> result.observation() == Observation.DOWN);
        }

        @Override
        public List<CallResult> late(List<Item> chunk) {
            return List.of(CallResult.failed(group, chunk, "no answer before the invocation's deadline"));
        }
    }

    private CallResult callHandler(HandlerRef group, HandlerSpec spec, List<Item> chunk, Map<UUID, ItemStore.Claimed> claimed,
                                   Duration timeLeft) {
        try {
            if (spec.batch()) {
                List<ObjectNode> bodies = new ArrayList<>(chunk.size());
                List<String> ids = new ArrayList<>(chunk.size());
                for (Item item : chunk) {
                    bodies.add(withCallback(itemBody(item.job(), claimed.get(item.itemId())), spec));
                    ids.add(item.itemId().toString());
                }
                Map<UUID, Outcome> outcomes = new HashMap<>();
                handlers.processBatch(group.integrationKey(), spec, bodies, ids, timeLeft)
                        .forEach((id, outcome) -> outcomes.put(UUID.fromString(id), pendingIfIssued(outcome)));
                return CallResult.of(group, outcomes);
            }
            Item item = chunk.getFirst();
            Outcome outcome = handlers.process(group.integrationKey(), spec, withCallback(itemBody(item.job(), claimed.get(item.itemId())), spec),
                    item.itemId().toString(), timeLeft);
            return CallResult.of(group, Map.of(item.itemId(), pendingIfIssued(outcome)));
        } catch (RuntimeException e) {
            LOG.error("handler call crashed", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(), "error", e);
            return CallResult.failed(group, chunk, "handler call failed in Runner: " + e.getClass().getSimpleName());
        }
    }

    /**
     * The item with its attempt's callback URL, valid for the call and the handler's whole wait after it: the URL cannot
     * outlive the attempt's wait by more than the call took, and the attempt's wait is what Postgres enforces.
     */
    private ObjectNode withCallback(ObjectNode item, HandlerSpec spec) {
        if (callbacks.issuing()) {
            Duration valid = Duration.ofMillis(spec.configs().timeoutMs() + spec.configs().callbackTimeoutMs());
            item.put("callbackUrl", callbacks.url(UUID.fromString(item.get("itemId").asText()), item.get("attempt").asInt(), valid).toString());
        }
        return item;
    }

    /** A pending answer with no callback URL given (RUNNER_CALLBACK_BASE_URL unset) could never complete: a permanent failure. */
    private Outcome pendingIfIssued(Outcome outcome) {
        return outcome instanceof Outcome.Pending && !callbacks.issuing()
                ? new Outcome.Failed("handler answered pending, but Runner gives no callback URLs: RUNNER_CALLBACK_BASE_URL is not set", false)
                : outcome;
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
}
