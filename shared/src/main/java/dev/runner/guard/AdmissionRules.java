package dev.runner.guard;

import dev.runner.guard.HandlerLimits.Verdict;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * The guard's decisions, as pure functions of the two scripts' answers: how the handler's and the
 * tenant's answers combine into one {@link Admission}, and what a script took for an item that
 * ends up not admitted and must be given back. No I/O (AdmissionRulesTest).
 */
final class AdmissionRules {

    /**
     * No deferral is shorter: SQS delays in whole seconds, and a zero delay would bring the item
     * straight back to be deferred again, in a loop.
     */
    static final Duration SHORTEST_DEFERRAL = Duration.ofSeconds(1);

    private AdmissionRules() {}

    /**
     * One item's decision and its give-backs.
     *
     * @param releaseHandler      the handler script took a lease, a rate entry or a probe for an
     *                            item that is not admitted: give them back
     * @param refundTenantUpTo    give back the item's tenant slot if it lies at or before this time
     *                            (ms): a slot taken now for a deferred item, any slot of a paused one
     */
    record Combined(Admission admission, boolean releaseHandler, OptionalLong refundTenantUpTo) {}

    static Combined combine(String itemId, Verdict handler, long tenantDelayMs, long now) {
        Admission admission = decide(itemId, handler, tenantDelayMs);
        boolean handlerTook = handler.code() == AdmitCode.ADMITTED && !(admission instanceof Admission.Admitted);
        OptionalLong refund = switch (admission) {
            case Admission.Admitted admitted -> OptionalLong.empty();
            // Parked until resumed, maybe for hours: a reserved slot would be wasted too.
            case Admission.Paused paused -> OptionalLong.of(Long.MAX_VALUE);
            // A slot taken now is given back; a future one is kept, since the item comes back to it.
            case Admission.Deferred deferred -> tenantDelayMs == 0 ? OptionalLong.of(now) : OptionalLong.empty();
        };
        return new Combined(admission, handlerTook, refund);
    }

    /** Paused wins; admitted only if both admit; otherwise the longer delay, with its reason. */
    static Admission decide(String itemId, Verdict handler, long tenantDelayMs) {
        return switch (handler.code()) {
            case PAUSED -> new Admission.Paused(itemId);
            case ADMITTED -> tenantDelayMs == 0
                    ? new Admission.Admitted(itemId)
                    : deferred(itemId, tenantDelayMs, DeferReason.TENANT_LIMIT);
            case BREAKER_OPEN -> longer(itemId, handler.delayMs(), DeferReason.BREAKER_OPEN, tenantDelayMs);
            case BREAKER_PROBING -> longer(itemId, handler.delayMs(), DeferReason.BREAKER_PROBING, tenantDelayMs);
            case HANDLER_RATE -> longer(itemId, handler.delayMs(), DeferReason.HANDLER_RATE, tenantDelayMs);
            case HANDLER_CONCURRENCY -> longer(itemId, handler.delayMs(), DeferReason.HANDLER_CONCURRENCY, tenantDelayMs);
            case ADAPTIVE_STOP -> longer(itemId, handler.delayMs(), DeferReason.ADAPTIVE_STOP, tenantDelayMs);
            case ADAPTIVE_LIMIT -> longer(itemId, handler.delayMs(), DeferReason.ADAPTIVE_LIMIT, tenantDelayMs);
        };
    }

    /**
     * Leases were granted for the calls the handler script admitted; items the tenant window
     * deferred need none, so leases beyond the calls still to make go back at once: {@code kept}
     * gets those to keep, {@code surplus} the others. With tenant lanes each lease is one tenant's,
     * counted against that tenant's calls.
     */
    static void keepLeases(GroupRequest group, java.util.List<Admission> decisions, java.util.List<String> tokens, boolean tenantLanes,
                           java.util.List<String> kept, java.util.List<String> surplus) {
        java.util.Map<String, Integer> admittedOf = new java.util.HashMap<>();
        for (int i = 0; i < decisions.size(); i++) {
            if (decisions.get(i) instanceof Admission.Admitted) {
                admittedOf.merge(tenantLanes ? group.items().get(i).tenantId() : "", 1, Integer::sum);
            }
        }
        java.util.Map<String, Integer> keptOf = new java.util.HashMap<>();
        for (String token : tokens) {
            String key = tenantLanes ? java.util.Objects.requireNonNullElse(GroupAdmission.tenantOfLease(token), "") : "";
            int calls = Math.ceilDiv(admittedOf.getOrDefault(key, 0), group.itemsPerCall());
            if (keptOf.getOrDefault(key, 0) < calls) {
                keptOf.merge(key, 1, Integer::sum);
                kept.add(token);
            } else {
                surplus.add(token);
            }
        }
    }

    /** The delay before an item about to be enqueued reaches its tenant slot: zero, or a deferral. */
    static Duration reservedDelay(long tenantDelayMs) {
        return tenantDelayMs == 0 ? Duration.ZERO : atLeastShortest(tenantDelayMs);
    }

    private static Admission longer(String itemId, long handlerDelayMs, DeferReason handlerReason, long tenantDelayMs) {
        if (tenantDelayMs > handlerDelayMs) {
            return deferred(itemId, tenantDelayMs, DeferReason.TENANT_LIMIT);
        }
        if (handlerReason == DeferReason.HANDLER_CONCURRENCY || handlerReason == DeferReason.ADAPTIVE_LIMIT) {
            // When a lease is expected back, to the millisecond: the worker may wait that long in its
            // invocation; sent back to SQS instead, the delay is rounded up to whole seconds anyway.
            return new Admission.Deferred(itemId, Duration.ofMillis(Math.max(1, handlerDelayMs)), handlerReason);
        }
        return deferred(itemId, handlerDelayMs, handlerReason);
    }

    private static Admission deferred(String itemId, long delayMs, DeferReason reason) {
        return new Admission.Deferred(itemId, atLeastShortest(delayMs), reason);
    }

    private static Duration atLeastShortest(long delayMs) {
        Duration delay = Duration.ofMillis(delayMs);
        return delay.compareTo(SHORTEST_DEFERRAL) < 0 ? SHORTEST_DEFERRAL : delay;
    }
}
