package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The guard's codec: turns arguments into script calls (keys from {@link Keys}, arguments in the
 * order of each script's header) and replies into records. It decides nothing; {@link Guard}
 * and {@link AdmissionRules} do.
 */
final class GuardScripts {

    /**
     * Most items one admitTenant call carries: a dispatch of any size is cut into calls of this
     * many (pipelined all the same), so no single script holds Redis for long.
     */
    static final int MAX_ITEMS_PER_CALL = 1_000;

    /** The handler script's answer for one item. */
    record HandlerVerdict(AdmitCode code, long delayMs) {}

    /**
     * The handler script's answer for one group, in the order of its items, with the leases it granted.
     *
     * @param breakerHalfOpen the breaker was half-open (an open one shows in the verdicts)
     */
    record HandlerAnswer(List<HandlerVerdict> verdicts, boolean breakerClean, List<String> leaseTokens, boolean breakerHalfOpen) {

        /** Admission found the breaker open or half-open: the metrics' BreakerOpen. */
        boolean breakerNotClosed() {
            return breakerHalfOpen || verdicts.stream().anyMatch(v -> v.code() == AdmitCode.BREAKER_OPEN || v.code() == AdmitCode.BREAKER_PROBING);
        }
    }

    private final Keys keys;
    private final RunnerConfig.Breaker breaker;
    private final RunnerConfig.TenantLimit tenantLimit;
    private final Duration leaseTtl;

    GuardScripts(Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit, Duration leaseTtl) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.breaker = Objects.requireNonNull(breaker, "breaker");
        this.tenantLimit = Objects.requireNonNull(tenantLimit, "tenantLimit");
        this.leaseTtl = Objects.requireNonNull(leaseTtl, "leaseTtl");
    }

    /** admitHandler-8.lua for one group; {@code tokenPrefix} names its leases, unique to this admission. */
    Pipeline.Request<HandlerAnswer> admitHandler(GroupRequest group, long now, String tokenPrefix) {
        String integration = group.integrationKey();
        String handler = group.handlerKey();
        List<String> args = new ArrayList<>(12 + 2 * group.items().size());
        args.add(Long.toString(now));
        args.add(Long.toString(breaker.openFor().toMillis()));
        args.add(Integer.toString(breaker.halfOpenSuccesses()));
        args.add(Integer.toString(group.limits().concurrency()));
        args.add(Integer.toString(group.limits().ratePerMinute()));
        args.add(Long.toString(leaseTtl.toMillis()));
        args.add(Long.toString(tenantLimit.shortestDeferral().toMillis()));
        args.add(Integer.toString(Guard.URGENT_PRIORITY));
        args.add(Integer.toString(group.itemsPerCall()));
        args.add(tokenPrefix);
        args.add(Long.toString(Math.max(1, group.expectedCall().toMillis())));
        args.add(Long.toString(group.holdFor().toMillis()));
        for (Candidate item : group.items()) {
            args.add(item.itemId());
            args.add(Integer.toString(item.priority()));
        }
        Redis.Call call = new Redis.Call(Script.ADMIT_HANDLER, List.of(
                keys.breaker(integration), keys.probes(integration), keys.paused(integration, handler),
                keys.leases(integration, handler), keys.rate(integration, handler), keys.urgent(integration, handler),
                keys.leaseWaiters(integration, handler), keys.leaseFreed(integration, handler)), args);
        int items = group.items().size();
        return Pipeline.Request.of(call, reply -> handlerAnswer((List<?>) reply, items, tokenPrefix));
    }

    private static HandlerAnswer handlerAnswer(List<?> reply, int items, String tokenPrefix) {
        int granted = reply.size() < 2 * items + 3 ? -1 : ((Long) reply.get(2 * items + 2)).intValue();
        if (granted < 0 || reply.size() != 2 * items + 3 + granted) {
            throw new IllegalStateException("admitHandler answered " + reply.size() + " values for " + items + " items");
        }
        List<HandlerVerdict> verdicts = new ArrayList<>(items);
        for (int i = 0; i < items; i++) {
            verdicts.add(new HandlerVerdict(AdmitCode.of((Long) reply.get(2 * i)), (Long) reply.get(2 * i + 1)));
        }
        boolean clean = (Long) reply.get(2 * items) == 1L;
        boolean halfOpen = (Long) reply.get(2 * items + 1) == 1L;
        List<String> tokens = new ArrayList<>(granted);
        for (int n = 1; n <= granted; n++) {
            tokens.add(tokenPrefix + ":" + n + ":" + reply.get(2 * items + 2 + n));
        }
        return new HandlerAnswer(verdicts, clean, tokens, halfOpen);
    }

    /**
     * admitTenant-1.lua for one tenant's items, in calls of at most {@link #MAX_ITEMS_PER_CALL}
     * items (they run one after the other on the tenant's slot, as one call would); the answer is
     * each item's delay in ms (0 = room now), in order.
     */
    Pipeline.Request<List<Long>> admitTenant(String tenantId, List<String> itemIds, long now) {
        List<Redis.Call> calls = new ArrayList<>();
        for (int from = 0; from < itemIds.size(); from += MAX_ITEMS_PER_CALL) {
            List<String> chunk = itemIds.subList(from, Math.min(itemIds.size(), from + MAX_ITEMS_PER_CALL));
            List<String> args = new ArrayList<>(4 + chunk.size());
            args.add(Long.toString(now));
            args.add(Long.toString(Guard.TENANT_WINDOW.toMillis()));
            args.add(Integer.toString(tenantLimit.perMinute()));
            args.add(Long.toString(tenantLimit.shortestDeferral().toMillis()));
            args.addAll(chunk);
            calls.add(new Redis.Call(Script.ADMIT_TENANT, List.of(keys.tenantWindow(tenantId)), args));
        }
        int items = itemIds.size();
        return new Pipeline.Request<>(calls, replies -> {
            List<Long> delays = new ArrayList<>(items);
            replies.forEach(reply -> ((List<?>) reply).forEach(delay -> delays.add((Long) delay)));
            if (delays.size() != items) {
                throw new IllegalStateException("admitTenant answered " + delays.size() + " delays for " + items + " items");
            }
            return delays;
        });
    }

    /** reportOutcome-6.lua for one group; {@link Transition#of} reads its reply. */
    Redis.Call report(GroupReport report, long now) {
        String integration = report.integrationKey();
        List<String> args = new ArrayList<>();
        args.add(Long.toString(now));
        args.add(Integer.toString(breaker.failureThreshold()));
        args.add(Long.toString(breaker.openFor().toMillis()));
        args.add(Integer.toString(breaker.halfOpenSuccesses()));
        args.add(Integer.toString(report.leaseTokens().size()));
        args.addAll(report.leaseTokens());
        args.add(Integer.toString(report.admittedItemIds().size()));
        args.addAll(report.admittedItemIds());
        for (GroupReport.Call call : report.calls()) {
            args.add(call.up() ? "1" : "0");
            args.add(Integer.toString(call.itemIds().size()));
            args.addAll(call.itemIds());
        }
        String handler = report.handlerKey();
        return new Redis.Call(Script.REPORT_OUTCOME, List.of(keys.breaker(integration), keys.probes(integration),
                keys.leases(integration, handler), keys.urgent(integration, handler), keys.leaseWaiters(integration, handler),
                keys.leaseFreed(integration, handler)), args);
    }

    /** The breaker transition a report made, as reportOutcome-6.lua's second value codes it. */
    enum Transition {
        NONE, OPENED, CLOSED;

        static Transition of(Object reply) {
            List<?> values = (List<?>) reply;
            long code = values.size() > 1 ? (Long) values.get(1) : 0L;
            return switch ((int) code) {
                case 1 -> OPENED;
                case 2 -> CLOSED;
                default -> NONE;
            };
        }
    }

    /**
     * releaseHandler-6.lua: gives back what the admission at {@code admittedAt} took that will not be
     * used: the items' rate entries, probes and urgent markers, and the leases of calls not to be made.
     */
    Redis.Call releaseHandler(String integration, String handler, List<String> leaseTokens, List<String> itemIds, long admittedAt) {
        List<String> args = new ArrayList<>(2 + leaseTokens.size() + itemIds.size());
        args.add(Long.toString(admittedAt));
        args.add(Integer.toString(leaseTokens.size()));
        args.addAll(leaseTokens);
        args.addAll(itemIds);
        return new Redis.Call(Script.RELEASE_HANDLER, List.of(keys.rate(integration, handler), keys.probes(integration),
                keys.urgent(integration, handler), keys.leases(integration, handler), keys.leaseWaiters(integration, handler),
                keys.leaseFreed(integration, handler)), args);
    }

    /** refundTenant-1.lua: gives back the items' slots at or before the cutoff. */
    Redis.Call refundTenant(String tenantId, List<String> itemIds, long cutoffMs) {
        List<String> args = new ArrayList<>(1 + itemIds.size());
        args.add(Long.toString(cutoffMs));
        args.addAll(itemIds);
        return new Redis.Call(Script.REFUND_TENANT, List.of(keys.tenantWindow(tenantId)), args);
    }

    /** readBreaker-1.lua: the breaker as of now, as the next admission or report will see it. */
    Pipeline.Request<BreakerSnapshot> readBreaker(String integrationKey, long now) {
        return readBreaker(keys, breaker.openFor(), integrationKey, now);
    }

    /** The same read for a caller that holds no other script arguments (the operator's readings). */
    static Pipeline.Request<BreakerSnapshot> readBreaker(Keys keys, Duration openFor, String integrationKey, long now) {
        Redis.Call call = new Redis.Call(Script.READ_BREAKER, List.of(keys.breaker(integrationKey)),
                List.of(Long.toString(now), Long.toString(openFor.toMillis())));
        return Pipeline.Request.of(call, reply -> {
            List<?> fields = (List<?>) reply;
            return new BreakerSnapshot(integrationKey, BreakerState.fromWire((String) fields.get(0)),
                    ((Long) fields.get(1)).intValue(), ((Long) fields.get(2)).intValue(),
                    (Long) fields.get(3), (Long) fields.get(4));
        });
    }

    /** countDeferrals-1.lua: adds a minute's deferrals by reason to that minute's counters (the operator's charts). */
    Redis.Call countDeferrals(Map<DeferReason, Integer> deferrals, long now) {
        List<String> args = new ArrayList<>(1 + 2 * deferrals.size());
        args.add(Long.toString(Guard.DEFERRAL_COUNTS_TTL.toMillis()));
        deferrals.forEach((reason, count) -> {
            args.add(reason.wireName());
            args.add(Integer.toString(count));
        });
        return new Redis.Call(Script.COUNT_DEFERRALS, List.of(keys.deferrals(now / 60_000)), args);
    }
}
