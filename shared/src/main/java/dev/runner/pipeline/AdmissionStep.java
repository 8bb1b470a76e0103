package dev.runner.pipeline;

import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.ConcurrencyAndRate;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.log.Log;
import dev.runner.pause.PauseStore;
import dev.runner.pipeline.Settlement.Fate;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.pipeline.Settlement.Reason;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The admission step of {@link ItemWorker}: parks the items of disabled tenant integrations and of
 * paused handlers, and asks the guard which of the rest may be called now. A group that found no
 * concurrency lease free waits for one in this invocation when one is expected back soon
 * ({@code RUNNER_LANE_WAIT_MS}) and calls would still fit after it: the handler stays at its limit
 * without the batch going back to SQS.
 */
public final class AdmissionStep {

    private static final Log LOG = Log.of(AdmissionStep.class);

    private final Guard guard;
    private final PauseStore pauses;
    private final Integrations integrations;
    private final CallTimes callTimes;
    private final Duration laneWait;
    private final Duration pausedRaceDelay;

    /**
     * @param laneWait        the longest a group waits in this invocation for a lease to come back
     * @param pausedRaceDelay how long an item waits that admission saw paused and Postgres no longer
     */
    public AdmissionStep(Guard guard, PauseStore pauses, Integrations integrations, CallTimes callTimes, Duration laneWait,
                         Duration pausedRaceDelay) {
        this.guard = guard;
        this.pauses = pauses;
        this.integrations = integrations;
        this.callTimes = callTimes;
        this.laneWait = laneWait;
        this.pausedRaceDelay = pausedRaceDelay;
    }

    /**
     * Items of tenant integrations that are disabled are parked, as a pause parks them: disabling
     * an integration stops its items until it is enabled again. The check reads a short-lived cache;
     * Postgres, which the park statement asks, has the last word.
     */
    void parkDisabled(Map<HandlerRef, List<Item>> groups, List<Fate> fates) {
        Map<List<String>, List<Item>> byTenant = new LinkedHashMap<>();
        groups.values().forEach(members -> members.forEach(item ->
                byTenant.computeIfAbsent(List.of(item.job().tenantId(), item.job().integrationKey()), k -> new ArrayList<>()).add(item)));
        Set<UUID> parked = new LinkedHashSet<>();
        // One lookup for the batch's tenants not cached: a batch of event items may hold ten tenants.
        Map<Integrations.TenantKey, Optional<TenantIntegration>> tenants = integrations.tenantIntegrationsCached(
                byTenant.keySet().stream().map(key -> new Integrations.TenantKey(key.get(0), key.get(1))).toList());
        byTenant.forEach((key, members) -> {
            Optional<TenantIntegration> tenant = tenants.get(new Integrations.TenantKey(key.get(0), key.get(1)));
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
     * Gives back what admission took for items it admitted that the claim did not give this worker (waiting for an
     * earlier item of their record, early, ended, another worker's): their rate entries, probes and urgent markers, on
     * the report's round trip. Each is admitted again when it is called, so it counts once against the handler's rate;
     * the leases go back with the report.
     */
    void giveBackUnclaimed(Map<HandlerRef, List<Item>> groups, Admitted admitted, Set<UUID> claimedIds) {
        admitted.byGroup().forEach((group, admission) -> {
            List<String> unclaimed = groups.getOrDefault(group, List.of()).stream().map(Item::itemId)
                    .filter(id -> admitted.itemIds().contains(id) && !claimedIds.contains(id)).map(UUID::toString).toList();
            if (!unclaimed.isEmpty()) {
                guard.giveBack(admission, unclaimed);
            }
        });
    }

    /**
     * One pipelined Redis round trip decides every group's items: admitted, deferred (with the
     * computed delay: a fate of its own) or paused (parked in Postgres, no SQS traffic). A group
     * that may wait for a lease is woken by the lease's ring ({@link Guard#awaitLease}) and asked
     * again. Items of an unknown handler skip admission and fail permanently after their claim.
     */
    Admitted admit(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, List<Fate> fates,
                   long callDeadline, LongSupplier remainingMillis) {
        return admit(groups, specs, fates, callDeadline, remainingMillis, true);
    }

    /**
     * @param mayWait whether items that find no lease may wait for one in this invocation; a
     *                further round (items asked again after a first round's calls) may not: they
     *                take a lease free then or are deferred, so an invocation does not sit on one
     *                tenant's items while the queue has others' to serve
     */
    Admitted admit(Map<HandlerRef, List<Item>> groups, Map<HandlerRef, HandlerSpec> specs, List<Fate> fates,
                   long callDeadline, LongSupplier remainingMillis, boolean mayWait) {
        Decisions decisions = new Decisions(fates);
        Map<HandlerRef, List<Item>> asking = new LinkedHashMap<>();
        for (var entry : groups.entrySet()) {
            if (specs.containsKey(entry.getKey())) {
                asking.put(entry.getKey(), entry.getValue());
            } else {
                entry.getValue().forEach(item -> decisions.admittedIds.add(item.itemId()));
            }
        }
        long waitUntil = System.nanoTime() + (mayWait ? laneWait.toNanos() : 0);
        while (!asking.isEmpty()) {
            Map<String, Item> byId = new HashMap<>();
            List<GroupRequest> requests = new ArrayList<>();
            for (var entry : asking.entrySet()) {
                entry.getValue().forEach(item -> byId.put(item.itemId().toString(), item));
                HandlerSpec spec = specs.get(entry.getKey());
                requests.add(request(entry.getKey(), spec, entry.getValue(), expectedCall(entry.getKey(), spec), remainingMillis.getAsLong(),
                        tenant -> weight(tenant, entry.getKey().integrationKey())));
            }
            Map<HandlerRef, List<Item>> waiting = decisions.take(guard.admit(requests), byId,
                    (group, delay) -> canWait(System.nanoTime(), delay, waitUntil, callDeadline, expectedCall(group, specs.get(group))));
            long waitNanos = Math.max(0, waitUntil - System.nanoTime());
            if (waiting.size() == 1) {
                // One handler to wait for (the usual case): woken by the first lease it gives back.
                HandlerRef group = waiting.keySet().iterator().next();
                guard.awaitLease(group.integrationKey(), group.handlerKey(), Duration.ofNanos(waitNanos));
            } else if (!waiting.isEmpty()) {
                // Several: the lease expected back first, asked again then, not before (each try is a round trip).
                LockSupport.parkNanos(Math.min(decisions.soonestNanos, waitNanos));
            }
            asking = waiting;
        }
        // Redis away: admission could not see pauses, so Postgres, which holds them, is asked.
        for (HandlerRef group : pauses.pausedAmong(List.copyOf(decisions.failedOpen))) {
            for (Item item : groups.get(group)) {
                if (decisions.admittedIds.remove(item.itemId())) {
                    decisions.paused.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                }
            }
        }
        return new Admitted(decisions.admittedIds, decisions.byGroup, decisions.paused, decisions.later);
    }

    /** What the guard's answers of one round decided, gathered over the rounds of one batch. */
    static final class Decisions {
        final Set<UUID> admittedIds = new LinkedHashSet<>();
        final Map<HandlerRef, GroupAdmission> byGroup = new LinkedHashMap<>();
        final Map<HandlerRef, List<Item>> paused = new LinkedHashMap<>();
        final Set<HandlerRef> failedOpen = new LinkedHashSet<>();
        /** Items of a group with calls to make that found no lease of their own: asked again once those calls are done. */
        final Map<HandlerRef, List<Item>> later = new LinkedHashMap<>();
        private final List<Fate> fates;
        /** When the lease expected back first, of the last round's waiting items, is due (a delay in nanoseconds). */
        long soonestNanos = Long.MAX_VALUE;

        Decisions(List<Fate> fates) {
            this.fates = fates;
        }

        interface WaitRule {
            boolean canWait(HandlerRef group, Duration delay);
        }

        /**
         * Sorts one round's answers: admitted, deferred (a fate), paused; items that found no lease
         * free and may wait for one are returned, by group, to be asked again.
         */
        Map<HandlerRef, List<Item>> take(List<GroupAdmission> answers, Map<String, Item> byId, WaitRule waitRule) {
            Map<HandlerRef, List<Item>> waiting = new LinkedHashMap<>();
            soonestNanos = Long.MAX_VALUE;
            for (GroupAdmission admission : answers) {
                HandlerRef group = new HandlerRef(admission.request().integrationKey(), admission.request().handlerKey());
                if (admission.failedOpen()) {
                    failedOpen.add(group);
                }
                // A group with calls to make does not hold its leases idle waiting for more: the rest are
                // asked again once its calls are done (while tenants compete: other tenants' items).
                boolean calling = admission.decisions().stream().anyMatch(Admission.Admitted.class::isInstance);
                for (Admission decision : admission.decisions()) {
                    Item item = byId.get(decision.itemId());
                    switch (decision) {
                        case Admission.Admitted a -> {
                            admittedIds.add(item.itemId());
                            byGroup.put(group, admission);
                        }
                        case Admission.Deferred d when (d.reason() == DeferReason.HANDLER_CONCURRENCY
                                || d.reason() == DeferReason.ADAPTIVE_LIMIT) && waitRule.canWait(group, d.delay()) -> {
                            if (calling) {
                                later.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                            } else {
                                waiting.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                                soonestNanos = Math.min(soonestNanos, d.delay().toNanos());
                            }
                        }
                        case Admission.Deferred d -> fates.add(new Fate.Deferred(item, d.delay(), Reason.valueOf(d.reason().name())));
                        case Admission.Paused p -> paused.computeIfAbsent(group, g -> new ArrayList<>()).add(item);
                    }
                }
            }
            return waiting;
        }
    }

    /** Waiting in this invocation is worth it: the lease is expected back before {@code waitUntil}, and calls would still fit after it. */
    static boolean canWait(long nowNanos, Duration delay, long waitUntil, long callDeadline, Duration expectedCall) {
        long backAt = nowNanos + delay.toNanos();
        return backAt <= waitUntil && backAt + 2 * expectedCall.toNanos() < callDeadline;
    }

    private Duration expectedCall(HandlerRef group, HandlerSpec spec) {
        return callTimes.expected(group, Duration.ofMillis(spec.configs().timeoutMs()));
    }

    /** A tenant's weight on an integration (its share when tenants compete), from the short-lived cache; the default when unknown. */
    private int weight(String tenantId, String integrationKey) {
        return integrations.tenantIntegrationCached(tenantId, integrationKey).map(TenantIntegration::weightOrDefault)
                .orElse(TenantIntegration.DEFAULT_WEIGHT);
    }

    /** A group's ask: its items most urgent first, each with its tenant's weight, its limits, and how long what it is granted may be held. */
    static GroupRequest request(HandlerRef group, HandlerSpec spec, List<Item> members, Duration expectedCall, long remainingMillis,
                                java.util.function.ToIntFunction<String> weightOf) {
        List<Candidate> candidates = new ArrayList<>(members.size());
        Map<String, Integer> weights = new HashMap<>();
        members.forEach(item -> candidates.add(new Candidate(item.itemId().toString(), item.job().tenantId(), item.job().trigger().priority(),
                item.job().tenantSlotAt(), Candidate.runTagOf(item.job().runId()),
                weights.computeIfAbsent(item.job().tenantId(), weightOf::applyAsInt))));
        return new GroupRequest(group.integrationKey(), group.handlerKey(),
                new ConcurrencyAndRate(spec.configs().concurrency(), spec.configs().ratePerMinute()), candidates,
                spec.batch() ? spec.configs().batchSize() : 1, expectedCall, Duration.ofMillis(Math.max(0, remainingMillis)));
    }

    /** Parks a paused group's items; one Postgres no longer sees paused waits briefly instead. */
    void park(HandlerRef group, List<Item> members, List<Fate> fates) {
        Set<UUID> parked = pauses.park(members.stream().map(Item::itemId).toList(), group);
        if (parked.isEmpty() && !pauses.isPaused(group)) {
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
                    : new Fate.Deferred(item, pausedRaceDelay, Reason.PAUSED_RACE));
        }
        if (!parked.isEmpty()) {
            LOG.info("parked", "integrationKey", group.integrationKey(), "handlerKey", group.handlerKey(), "items", parked.size());
        }
    }
}
