package dev.runner.waiting;

import dev.runner.config.RunnerConfig;
import dev.runner.guard.BreakerSnapshot;
import dev.runner.guard.BreakerState;
import dev.runner.guard.DeferReason;
import dev.runner.guard.Guard;
import dev.runner.guard.GuardReadings;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.pause.PauseStore;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Why a tenant's items wait, per handler: each reason that holds them now, and each that deferred
 * them in the last minutes, with counts. The reasons, by their wire names: {@code tenant_limit}
 * (its window), {@code handler_concurrency} and {@code handler_rate} (the handler's limits, its
 * fair share among tenants included), {@code adaptive_stop} and {@code adaptive_limit} (the
 * partner's Retry-After, limits learnt from its answers), {@code breaker_open} and
 * {@code breaker_probing} (the integration's breaker or the tenant's scope of it), {@code paused}
 * (the handler paused, or the tenant integration disabled), {@code backlog_horizon} (held in
 * Postgres past the horizon), {@code callback} (answered pending, waiting for the partner's callback),
 * {@code record_order} (behind an earlier item of the same record). Reads only: one statement and
 * three Redis round trips.
 */
public final class WaitReasons {

    /** Items answered pending wait for their callbacks (dev.runner.callback): the partner's work, not a limit of Runner's. */
    public static final String WAIT_CALLBACK = "callback";
    /** Items of an {@code ordered_by_record} handler wait for the earlier item of their record to end (dev.runner.ordering). */
    public static final String WAIT_RECORD_ORDER = "record_order";

    /**
     * One reason.
     *
     * @param now     it holds the tenant's items of this handler now
     * @param items   how many: items in that state now (parked, held), else deferrals of the last minutes
     * @param detail  what it is, in words (the limit and its use, until when), or null
     */
    public record Reason(String reason, boolean now, long items, String detail) {}

    /** A handler's waiting items of the tenant, by state, and why. */
    public record HandlerWait(HandlerRef handler, WaitingStore.Items items, List<Reason> reasons) {}

    /**
     * The tenant's answer.
     *
     * @param usedLastMinute slots of its window taken in the last minute; null when Redis is away
     * @param reservedAhead  slots reserved ahead (items sent with a delay); null when Redis is away
     * @param redisKnown     false when Redis did not answer: only Postgres' counts are known
     */
    public record TenantWait(String tenantId, int limitPerMinute, Long usedLastMinute, Long reservedAhead, long held,
                             List<HandlerWait> handlers, boolean redisKnown) {}

    private final WaitingStore store;
    private final GuardReadings readings;
    private final PauseStore pauses;
    private final Integrations integrations;
    private final RunnerConfig.TenantLimit limit;
    private final Clock clock;

    public WaitReasons(WaitingStore store, GuardReadings readings, PauseStore pauses, Integrations integrations,
                       RunnerConfig.TenantLimit limit, Clock clock) {
        this.store = store;
        this.readings = readings;
        this.pauses = pauses;
        this.integrations = integrations;
        this.limit = limit;
        this.clock = clock;
    }

    public TenantWait of(String tenantId) {
        Map<HandlerRef, WaitingStore.Items> open = store.openItems(tenantId);
        Optional<GuardReadings.TenantWaits> waits = readings.tenantWaits(tenantId);
        Set<HandlerRef> handlers = new LinkedHashSet<>(open.keySet());
        waits.ifPresent(w -> handlers.addAll(w.byHandler().keySet()));
        Optional<GuardReadings.TenantUsage> usage = readings.tenants(List.of(tenantId)).map(m -> m.get(tenantId));
        Optional<GuardReadings.HandlerReadings> read = readings.handlers(handlers);
        Map<HandlerRef, Instant> paused = pauses.paused();
        WaitingStore.Items none = new WaitingStore.Items(0, 0, 0, 0, 0, 0, 0);
        List<HandlerWait> waiting = new ArrayList<>();
        long held = 0;
        for (HandlerRef handler : handlers) {
            WaitingStore.Items items = open.getOrDefault(handler, none);
            held += items.held();
            Map<String, Long> lately = waits.map(w -> w.byHandler().getOrDefault(handler, Map.of())).orElse(Map.of());
            waiting.add(new HandlerWait(handler, items, reasons(tenantId, handler, items, lately, usage.orElse(null),
                    read.orElse(null), paused.containsKey(handler))));
        }
        return new TenantWait(tenantId, limit.perMinute(), usage.map(GuardReadings.TenantUsage::usedLastMinute).orElse(null),
                usage.map(GuardReadings.TenantUsage::reserved).orElse(null), held, waiting, read.isPresent() && usage.isPresent());
    }

    private List<Reason> reasons(String tenantId, HandlerRef handler, WaitingStore.Items items, Map<String, Long> lately,
                                 GuardReadings.TenantUsage usage, GuardReadings.HandlerReadings read, boolean paused) {
        List<Reason> reasons = new ArrayList<>();
        long now = clock.millis();
        add(reasons, Guard.WAIT_PAUSED, paused || items.parked() > 0, items.parked() > 0 ? items.parked() : lately.getOrDefault(Guard.WAIT_PAUSED, 0L),
                paused ? "the handler is paused" : items.parked() > 0 ? "the tenant integration is disabled" : null);
        add(reasons, Guard.WAIT_BACKLOG_HORIZON, items.held() > 0, items.held() > 0 ? items.held() : lately.getOrDefault(Guard.WAIT_BACKLOG_HORIZON, 0L),
                items.held() > 0 ? "held in Postgres past the horizon; released as its slots come near" : null);
        add(reasons, WAIT_CALLBACK, items.pending() > 0, items.pending(),
                items.pending() + " answered pending, waiting for the partner's callback (or the callback timeout)");
        add(reasons, WAIT_RECORD_ORDER, items.behindRecord() > 0, items.behindRecord(),
                items.behindRecord() + " behind an earlier item of the same record, released when it ends");
        boolean windowFull = usage != null && (usage.usedLastMinute() >= limit.perMinute() || usage.reserved() > 0);
        add(reasons, DeferReason.TENANT_LIMIT.wireName(), windowFull, lately.getOrDefault(DeferReason.TENANT_LIMIT.wireName(), 0L),
                usage == null ? null : usage.usedLastMinute() + " of " + limit.perMinute() + " this minute, " + usage.reserved() + " slots reserved ahead");
        Optional<HandlerSpec> spec = integrations.handler(handler.integrationKey(), handler.handlerKey());
        GuardReadings.HandlerUsage use = read == null ? null : read.usage().get(handler);
        int concurrency = spec.map(s -> s.configs().concurrency()).orElse(0);
        int rate = spec.map(s -> s.configs().ratePerMinute()).orElse(0);
        add(reasons, DeferReason.HANDLER_CONCURRENCY.wireName(), use != null && concurrency > 0 && use.leasesInUse() >= concurrency,
                lately.getOrDefault(DeferReason.HANDLER_CONCURRENCY.wireName(), 0L),
                use == null || concurrency == 0 ? null : use.leasesInUse() + " of " + concurrency + " calls in flight");
        add(reasons, DeferReason.HANDLER_RATE.wireName(), use != null && rate > 0 && use.admittedLastMinute() >= rate,
                lately.getOrDefault(DeferReason.HANDLER_RATE.wireName(), 0L),
                use == null || rate == 0 ? null : use.admittedLastMinute() + " of " + rate + " this minute");
        GuardReadings.FlowReading flow = read == null ? GuardReadings.FlowReading.NONE
                : read.flows().getOrDefault(handler, GuardReadings.FlowReading.NONE);
        List<GuardReadings.AdaptiveScope> scopes = new ArrayList<>();
        flow.handlerScope().ifPresent(scopes::add);
        flow.tenantScope(tenantId).ifPresent(scopes::add);
        Optional<GuardReadings.AdaptiveScope> stopped = scopes.stream().filter(scope -> scope.stoppedUntil() != null).findFirst();
        add(reasons, DeferReason.ADAPTIVE_STOP.wireName(), stopped.isPresent(), lately.getOrDefault(DeferReason.ADAPTIVE_STOP.wireName(), 0L),
                stopped.map(scope -> "the partner asked " + (scope.tenantId() == null ? "the handler" : "this tenant's calls")
                        + " to wait until " + scope.stoppedUntil() + " (Retry-After " + scope.lastRetryAfterMs() + " ms)").orElse(null));
        Optional<GuardReadings.AdaptiveScope> cut = scopes.stream().filter(scope -> scope.concurrency() != null || scope.ratePerMinute() != null)
                .findFirst();
        add(reasons, DeferReason.ADAPTIVE_LIMIT.wireName(), cut.isPresent(), lately.getOrDefault(DeferReason.ADAPTIVE_LIMIT.wireName(), 0L),
                cut.map(scope -> (scope.tenantId() == null ? "the handler's" : "this tenant's") + " limits learnt from the partner's answers ("
                        + scope.reason() + "): concurrency " + (scope.concurrency() == null ? concurrency : scope.concurrency()) + " of "
                        + concurrency + (scope.ratePerMinute() == null ? "" : ", rate " + scope.ratePerMinute() + " of " + rate)).orElse(null));
        BreakerSnapshot breaker = read == null ? null : read.breakers().get(handler.integrationKey());
        BreakerState state = breaker == null ? BreakerState.CLOSED : breaker.state();
        String scopeOf = "the integration's breaker";
        if (breaker != null && state == BreakerState.CLOSED) {
            for (BreakerSnapshot.TenantScope scope : breaker.tenants()) {
                if (scope.tenantId().equals(tenantId) && scope.state() != BreakerState.CLOSED) {
                    state = scope.state();
                    scopeOf = "this tenant's scope of the breaker";
                }
            }
        }
        add(reasons, DeferReason.BREAKER_OPEN.wireName(), state == BreakerState.OPEN, lately.getOrDefault(DeferReason.BREAKER_OPEN.wireName(), 0L),
                state == BreakerState.OPEN ? scopeOf + " is open" : null);
        add(reasons, DeferReason.BREAKER_PROBING.wireName(), state == BreakerState.HALF_OPEN,
                lately.getOrDefault(DeferReason.BREAKER_PROBING.wireName(), 0L), state == BreakerState.HALF_OPEN ? scopeOf + " is probing" : null);
        return reasons;
    }

    /** A reason is told when it holds now or deferred items lately. */
    private static void add(List<Reason> reasons, String reason, boolean now, long items, String detail) {
        if (now || items > 0) {
            reasons.add(new Reason(reason, now, items, now ? detail : null));
        }
    }
}
