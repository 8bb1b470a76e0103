package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisUnavailableException;
import dev.runner.redis.Script;
import dev.runner.trigger.Trigger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Admission of the item worker's batches against the pause flags, the integrations' circuit
 * breakers, the handlers' concurrency and rate, and the tenants' sliding windows; all state in
 * Redis, every check one Lua script on one cluster slot.
 *
 * <p><b>Round trips.</b> {@link #admit} runs one admitHandler script per group (keys tagged by
 * integration) and one admitTenant script per tenant (keys tagged by tenant), all pipelined:
 * one round trip per batch. {@link #report} is the second.
 *
 * <p><b>Two scripts, one decision.</b> The handler script and the tenant script run side by side,
 * so neither knows the other's answer. The worker gets the combined decision: paused wins; else
 * the longest delay of the two (with its reason); admitted only if both admitted. What a script
 * took for an item that ends up not admitted is given back in the next round trip this Guard
 * makes (report or admit): a lease/rate entry/probe via releaseHandler, a tenant slot taken at
 * now via refundTenant. A tenant slot reserved in the future is kept for a deferred item, since
 * it comes back to it, and given back for a paused one. If no round trip follows, leases expire
 * after leaseTtl and window entries age out.
 *
 * <p><b>Priority.</b> Items with priority above {@link #URGENT_PRIORITY} (manual, queue, schedule) may
 * fill only limit − ⌈limit/4⌉ of a handler's concurrency and rate (limits ≥ 2); the rest stays
 * free for webhook items, so a manual or schedule backlog never holds every slot.
 *
 * <p><b>Redis down: fail open.</b> {@link #admit} admits everything, logs a warning and tells {@link GuardEvents}, the breaker
 * counts as closed ({@link #breaker} returns a closed snapshot), {@link #report} drops its updates
 * (leases expire by TTL). No item is lost or parked because Redis is away; handlers are then
 * protected only by their own capacity until Redis is back. {@link #setPaused} is the exception:
 * it throws {@link dev.runner.redis.RedisUnavailableException} so the caller knows the pause did
 * not reach Redis (Postgres' paused_handlers stays the truth).
 */
public final class Guard {

    private static final Logger log = LoggerFactory.getLogger(Guard.class);

    /** Items at or below this priority (webhook, manual) may use a handler's whole limits. */
    public static final int URGENT_PRIORITY = Trigger.WEBHOOK.priority();
    /** Longest a Lambda invocation runs: a lease of a live worker never expires before it reports. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofMinutes(15);
    /** The tenant limit's window. */
    public static final Duration TENANT_WINDOW = Duration.ofMinutes(1);

    private static final int PAUSED = 1;
    private static final DeferReason[] REASON_BY_CODE = {
            null, null, DeferReason.BREAKER_OPEN, DeferReason.BREAKER_PROBING,
            DeferReason.HANDLER_RATE, DeferReason.HANDLER_CONCURRENCY};

    private final Redis redis;
    private final Keys keys;
    private final RunnerConfig.Breaker breaker;
    private final RunnerConfig.TenantLimit tenantLimit;
    private final Clock clock;
    /** How long a concurrency lease (and a half-open probe) lives if its worker never reports. */
    private final Duration leaseTtl;
    /** Give-backs for the next round trip (see class comment). */
    private final ConcurrentLinkedQueue<Redis.Call> giveBacks = new ConcurrentLinkedQueue<>();
    /** Told each time the guard fails open, so it is counted, not only logged. */
    private final GuardEvents events;

    public Guard(Redis redis, Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit, Clock clock) {
        this(redis, keys, breaker, tenantLimit, clock, DEFAULT_LEASE_TTL);
    }

    public Guard(Redis redis, Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit,
                 Clock clock, Duration leaseTtl) {
        this(redis, keys, breaker, tenantLimit, clock, leaseTtl, GuardEvents.NONE);
    }

    public Guard(Redis redis, Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit,
                 Clock clock, Duration leaseTtl, GuardEvents events) {
        this.events = Objects.requireNonNull(events, "events");
        this.redis = Objects.requireNonNull(redis, "redis");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.breaker = Objects.requireNonNull(breaker, "breaker");
        this.tenantLimit = Objects.requireNonNull(tenantLimit, "tenantLimit");
        if (breaker.failureThreshold() < 1) {
            throw new IllegalArgumentException("failureThreshold < 1: " + breaker.failureThreshold());
        }
        if (breaker.halfOpenSuccesses() < 1) {
            throw new IllegalArgumentException("halfOpenSuccesses < 1: " + breaker.halfOpenSuccesses());
        }
        if (tenantLimit.perMinute() < 1) {
            throw new IllegalArgumentException("tenant perMinute < 1: " + tenantLimit.perMinute());
        }
        this.clock = Objects.requireNonNull(clock, "clock");
        if (leaseTtl.toMillis() < 1) {
            throw new IllegalArgumentException("leaseTtl < 1 ms: " + leaseTtl);
        }
        this.leaseTtl = leaseTtl;
    }

    /** Admission for all groups of one SQS batch: ONE pipelined round trip in total. */
    public List<GroupAdmission> admit(List<GroupRequest> groups) {
        if (groups.isEmpty()) {
            return List.of();
        }
        long now = clock.millis();
        List<Redis.Call> calls = drainGiveBacks();
        int firstGroupCall = calls.size();
        Map<String, List<String>> itemsByTenant = new LinkedHashMap<>();
        for (GroupRequest group : groups) {
            calls.add(admitHandlerCall(group, now));
            for (Candidate item : group.items()) {
                itemsByTenant.computeIfAbsent(item.tenantId(), t -> new ArrayList<>()).add(item.itemId());
            }
        }
        int firstTenantCall = calls.size();
        for (var tenant : itemsByTenant.entrySet()) {
            calls.add(admitTenantCall(tenant.getKey(), tenant.getValue(), now));
        }

        List<Object> replies;
        try {
            replies = redis.run(calls);
        } catch (RedisUnavailableException e) {
            log.warn("Redis unavailable, admitting {} groups without limits (fail-open): {}", groups.size(), e.toString());
            events.failedOpen(GuardEvents.FailOpen.ADMISSION, itemCount(groups));
            return groups.stream().map(Guard::admitAll).toList();
        } catch (RuntimeException e) {
            // A failing script is a bug, not an outage; items still flow rather than pile up.
            log.error("guard scripts failed, admitting {} groups without limits (fail-open)", groups.size(), e);
            events.failedOpen(GuardEvents.FailOpen.ADMISSION, itemCount(groups));
            return groups.stream().map(Guard::admitAll).toList();
        }

        Map<String, Long> tenantDelayByItem = new HashMap<>();
        int tenantCall = firstTenantCall;
        for (var tenant : itemsByTenant.entrySet()) {
            List<?> delays = (List<?>) replies.get(tenantCall++);
            for (int i = 0; i < tenant.getValue().size(); i++) {
                tenantDelayByItem.put(tenant.getValue().get(i), (Long) delays.get(i));
            }
        }

        List<GroupAdmission> admissions = new ArrayList<>(groups.size());
        Map<Refund, List<String>> refunds = new LinkedHashMap<>();
        for (int g = 0; g < groups.size(); g++) {
            GroupRequest group = groups.get(g);
            List<?> codes = (List<?>) replies.get(firstGroupCall + g);
            List<Admission> decisions = new ArrayList<>(group.items().size());
            List<String> handlerReleases = new ArrayList<>();
            for (int i = 0; i < group.items().size(); i++) {
                Candidate item = group.items().get(i);
                int code = ((Long) codes.get(2 * i)).intValue();
                long handlerDelay = (Long) codes.get(2 * i + 1);
                long tenantDelay = tenantDelayByItem.get(item.itemId());
                Admission decision = combine(item.itemId(), code, handlerDelay, tenantDelay);
                decisions.add(decision);
                switch (decision) {
                    case Admission.Admitted admitted -> { }
                    case Admission.Paused paused ->
                            // Parked until resumed, maybe for hours: a reserved slot would be wasted too.
                            refunds.computeIfAbsent(new Refund(item.tenantId(), Long.MAX_VALUE), r -> new ArrayList<>()).add(item.itemId());
                    case Admission.Deferred deferred -> {
                        if (code == 0) {
                            handlerReleases.add(item.itemId());
                        }
                        if (tenantDelay == 0) {
                            refunds.computeIfAbsent(new Refund(item.tenantId(), now), r -> new ArrayList<>()).add(item.itemId());
                        }
                    }
                }
            }
            if (!handlerReleases.isEmpty()) {
                giveBacks.add(releaseHandlerCall(group.integrationKey(), group.handlerKey(), handlerReleases));
            }
            int items = group.items().size();
            boolean clean = codes.size() > 2 * items && ((Long) codes.get(2 * items)) == 1L;
            admissions.add(new GroupAdmission(group, decisions, false, clean));
        }
        refunds.forEach((refund, items) -> giveBacks.add(refundTenantCall(refund.tenantId(), items, refund.cutoffMs())));
        return admissions;
    }

    /**
     * Reserves tenant-window slots for items about to be enqueued, so a producer can send each
     * with the delay until its slot (deferral at the source: a tenant's backlog waits invisible in
     * SQS instead of standing in front of other tenants' items and cycling through the worker).
     * The worker's admission later finds the slot and admits on it without counting again.
     * Returns each item's delay (zero = room now), in order. One pipelined round trip for all
     * tenants; Redis down: no delays (fail-open, the worker's admission still applies).
     */
    public Map<String, Duration> reserveTenantSlots(Map<String, List<String>> itemIdsByTenant) {
        Map<String, Duration> delays = new HashMap<>();
        if (itemIdsByTenant.isEmpty()) {
            return delays;
        }
        long now = clock.millis();
        List<Redis.Call> calls = new ArrayList<>();
        itemIdsByTenant.forEach((tenant, ids) -> calls.add(admitTenantCall(tenant, ids, now)));
        List<Object> replies;
        try {
            replies = redis.run(calls);
        } catch (RuntimeException e) {
            log.warn("Redis unavailable, enqueueing {} tenants' items without reserved slots: {}", itemIdsByTenant.size(), e.toString());
            events.failedOpen(GuardEvents.FailOpen.RESERVATION, itemIdsByTenant.values().stream().mapToInt(List::size).sum());
            itemIdsByTenant.values().forEach(ids -> ids.forEach(id -> delays.put(id, Duration.ZERO)));
            return delays;
        }
        int call = 0;
        for (List<String> ids : itemIdsByTenant.values()) {
            List<?> reply = (List<?>) replies.get(call++);
            for (int i = 0; i < ids.size(); i++) {
                delays.put(ids.get(i), Duration.ofMillis((Long) reply.get(i)));
            }
        }
        return delays;
    }

    /** After the handler calls: breaker outcomes + release of concurrency leases; ONE pipelined round trip in total. */
    public void report(List<GroupReport> reports) {
        long now = clock.millis();
        List<Redis.Call> calls = drainGiveBacks();
        for (GroupReport report : reports) {
            if (report.successes() > 0 || report.failures() > 0 || !report.releasedItemIds().isEmpty()) {
                calls.add(reportCall(report, now));
            }
        }
        try {
            redis.run(calls);
        } catch (RedisUnavailableException e) {
            log.warn("Redis unavailable, dropping {} breaker reports; leases expire after {}: {}",
                    reports.size(), leaseTtl, e.toString());
            events.failedOpen(GuardEvents.FailOpen.REPORT, reports.size());
        } catch (RuntimeException e) {
            log.error("guard report script failed, dropping {} breaker reports", reports.size(), e);
            events.failedOpen(GuardEvents.FailOpen.REPORT, reports.size());
        }
    }

    /** The breaker as of now; closed when Redis is unavailable (the fail-open policy). */
    public BreakerSnapshot breaker(String integrationKey) {
        Map<String, String> hash;
        try {
            hash = redis.hashGetAll(keys.breaker(integrationKey));
        } catch (RuntimeException e) {
            log.warn("Redis unavailable, breaker of {} reported closed: {}", integrationKey, e.toString());
            events.failedOpen(GuardEvents.FailOpen.BREAKER_READ, 1);
            return BreakerSnapshot.closed(integrationKey);
        }
        if (hash.isEmpty()) {
            return BreakerSnapshot.closed(integrationKey);
        }
        BreakerState state = BreakerState.fromWire(hash.get("state"));
        Long openedAt = longOrNull(hash.get("openedAt"));
        Long halfOpenAt = longOrNull(hash.get("halfOpenAt"));
        int successes = (int) orZero(hash.get("successes"));
        if (state == BreakerState.OPEN && openedAt != null
                && clock.millis() >= openedAt + breaker.openFor().toMillis()) {
            // The next admission or report writes this transition; a read shows it already.
            state = BreakerState.HALF_OPEN;
            halfOpenAt = openedAt + breaker.openFor().toMillis();
            successes = 0;
        }
        return new BreakerSnapshot(integrationKey, state, (int) orZero(hash.get("failures")),
                state == BreakerState.HALF_OPEN ? successes : 0, openedAt, halfOpenAt);
    }

    /**
     * Redis mirror of Postgres' paused_handlers.
     *
     * @throws dev.runner.redis.RedisUnavailableException the mirror was not updated
     */
    public void setPaused(String integrationKey, String handlerKey, boolean paused) {
        String key = keys.paused(integrationKey, handlerKey);
        if (paused) {
            redis.set(key, "1");
        } else {
            redis.delete(key);
        }
    }

    private Admission combine(String itemId, int code, long handlerDelay, long tenantDelay) {
        if (code == PAUSED) {
            return new Admission.Paused(itemId);
        }
        if (code == 0 && tenantDelay == 0) {
            return new Admission.Admitted(itemId);
        }
        if (code == 0 || tenantDelay > handlerDelay) {
            return new Admission.Deferred(itemId, Duration.ofMillis(tenantDelay), DeferReason.TENANT_LIMIT);
        }
        if (code < 0 || code >= REASON_BY_CODE.length || REASON_BY_CODE[code] == null) {
            throw new IllegalStateException("unknown admitHandler code " + code + " for item " + itemId);
        }
        return new Admission.Deferred(itemId, Duration.ofMillis(handlerDelay), REASON_BY_CODE[code]);
    }

    private static int itemCount(List<GroupRequest> groups) {
        return groups.stream().mapToInt(group -> group.items().size()).sum();
    }

    private static GroupAdmission admitAll(GroupRequest group) {
        List<Admission> admitted = group.items().stream()
                .<Admission>map(item -> new Admission.Admitted(item.itemId()))
                .toList();
        return new GroupAdmission(group, admitted, true, false);
    }

    private List<Redis.Call> drainGiveBacks() {
        List<Redis.Call> calls = new ArrayList<>();
        for (Redis.Call call; (call = giveBacks.poll()) != null; ) {
            calls.add(call);
        }
        return calls;
    }

    private Redis.Call admitHandlerCall(GroupRequest group, long now) {
        String integration = group.integrationKey();
        String handler = group.handlerKey();
        List<String> args = new ArrayList<>(8 + 2 * group.items().size());
        args.add(Long.toString(now));
        args.add(Long.toString(breaker.openFor().toMillis()));
        args.add(Integer.toString(breaker.halfOpenSuccesses()));
        args.add(Integer.toString(group.limits().concurrency()));
        args.add(Integer.toString(group.limits().ratePerMinute()));
        args.add(Long.toString(leaseTtl.toMillis()));
        args.add(Long.toString(tenantLimit.shortestDeferral().toMillis()));
        args.add(Integer.toString(URGENT_PRIORITY));
        for (Candidate item : group.items()) {
            args.add(item.itemId());
            args.add(Integer.toString(item.priority()));
        }
        return new Redis.Call(Script.ADMIT_HANDLER, List.of(
                keys.breaker(integration), keys.probes(integration), keys.paused(integration, handler),
                keys.leases(integration, handler), keys.rate(integration, handler)), args);
    }

    private Redis.Call admitTenantCall(String tenantId, List<String> itemIds, long now) {
        List<String> args = new ArrayList<>(4 + itemIds.size());
        args.add(Long.toString(now));
        args.add(Long.toString(TENANT_WINDOW.toMillis()));
        args.add(Integer.toString(tenantLimit.perMinute()));
        args.add(Long.toString(tenantLimit.shortestDeferral().toMillis()));
        args.addAll(itemIds);
        return new Redis.Call(Script.ADMIT_TENANT, List.of(keys.tenantWindow(tenantId)), args);
    }

    private Redis.Call reportCall(GroupReport report, long now) {
        String integration = report.integrationKey();
        List<String> args = new ArrayList<>(6 + report.releasedItemIds().size());
        args.add(Long.toString(now));
        args.add(Integer.toString(breaker.failureThreshold()));
        args.add(Long.toString(breaker.openFor().toMillis()));
        args.add(Integer.toString(breaker.halfOpenSuccesses()));
        args.add(Integer.toString(report.successes()));
        args.add(Integer.toString(report.failures()));
        args.addAll(report.releasedItemIds());
        return new Redis.Call(Script.REPORT_OUTCOME, List.of(
                keys.breaker(integration), keys.probes(integration),
                keys.leases(integration, report.handlerKey())), args);
    }

    private Redis.Call releaseHandlerCall(String integration, String handler, List<String> itemIds) {
        return new Redis.Call(Script.RELEASE_HANDLER, List.of(
                keys.leases(integration, handler), keys.rate(integration, handler), keys.probes(integration)), itemIds);
    }

    /** Tenant slots to give back: those at or before the cutoff. */
    private record Refund(String tenantId, long cutoffMs) {}

    private Redis.Call refundTenantCall(String tenantId, List<String> itemIds, long cutoffMs) {
        List<String> args = new ArrayList<>(1 + itemIds.size());
        args.add(Long.toString(cutoffMs));
        args.addAll(itemIds);
        return new Redis.Call(Script.REFUND_TENANT, List.of(keys.tenantWindow(tenantId)), args);
    }

    private static Long longOrNull(String value) {
        return value == null ? null : Long.valueOf(value);
    }

    private static long orZero(String value) {
        return value == null ? 0 : Long.parseLong(value);
    }
}
