package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.metrics.Metrics;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Admission of the item worker's batches against the pause flags, the integrations' circuit
 * breakers, the handlers' concurrency and rate, and the tenants' sliding windows; all state in
 * Redis, every check one Lua script on one cluster slot.
 *
 * <p><b>Round trips.</b> {@link #admit} runs one admitHandler script per group (keys tagged by
 * integration) and one admitTenant script per tenant and 1,000 items (keys tagged by tenant), all
 * pipelined: one round trip per batch. {@link #report} is the second.
 *
 * <p><b>Two scripts, one decision.</b> The handler script and the tenant script run side by side,
 * so neither knows the other's answer; {@code AdmissionRules} combines them (paused wins; else
 * the longest delay of the two, with its reason, never under one second; admitted only if both
 * admitted) and says what to give back. What a script took for an item that ends up not admitted
 * is given back in the next round trip this Guard makes (report or admit): a lease/rate
 * entry/probe via releaseHandler, a tenant slot taken at now via refundTenant. A tenant slot
 * reserved in the future is kept for a deferred item, since it comes back to it, and given back
 * for a paused one. If no round trip follows, leases expire after leaseTtl and window entries
 * age out. Each capability is a class of its own, with its scripts' codec: {@link Breaker}, {@link HandlerLimits},
 * {@link TenantWindow} ({@link DeferralCounts} for the charts); this class coordinates them.
 *
 * <p><b>Probes.</b> While the breaker is half-open, only the calls that carry an item admitted as
 * a probe decide it; a late answer to a call admitted before the breaker opened is ignored
 * (see recordOutcome-3.lua). {@link GroupReport.Call} lists each call's items for that.
 *
 * <p><b>Priority.</b> Items with priority above {@link #URGENT_PRIORITY} (manual, queue, schedule) may
 * fill only limit − ⌈limit/4⌉ of a handler's concurrency and rate (limits ≥ 2); the rest stays
 * free for webhook items, so a manual or schedule backlog never holds every slot.
 *
 * <p><b>Redis down: fail open.</b> {@link #admit} admits everything (and counts it: {@code RedisFailOpen}), the breaker counts as closed
 * ({@link #breaker} returns a closed snapshot), {@link #report} drops its updates (leases expire
 * by TTL), {@link #reserveTenantSlots} reserves nothing. No item is lost or parked because Redis
 * is away; handlers are then protected only by their own capacity until Redis is back. The same
 * holds when a script fails, but that is a bug, not an outage: it is logged as an error with its
 * stack, and an admission says which ({@link FailOpen}). {@link #setPaused} is the exception: it
 * throws {@link dev.runner.redis.RedisUnavailableException} so the caller knows the pause did not
 * reach Redis (Postgres' paused_handlers stays the truth).
 *
 * <p><b>Metrics</b> (docs/metrics.md) come from what the round trips answer anyway: BreakerOpen
 * when admission finds a breaker open or half-open, BreakerOpened when a report opens one,
 * TenantWindowDeferrals for slots reserved ahead, RedisFailOpen for every fail-open.
 */
public final class Guard {

    /** Items at or below this priority (webhook, manual) may use a handler's whole limits. */
    public static final int URGENT_PRIORITY = Trigger.WEBHOOK.priority();
    /** Longest a Lambda invocation runs: a lease of a live worker never expires before it reports. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofMinutes(15);
    /** The tenant limit's window. */
    public static final Duration TENANT_WINDOW = TenantWindow.LENGTH;
    /** How long a minute's deferral counts are kept: the charts go back a day at most. */
    public static final Duration DEFERRAL_COUNTS_TTL = DeferralCounts.KEPT;

    /**
     * The guard's configuration.
     *
     * @param leaseTtl how long a concurrency lease (and a half-open probe) lives if its worker never reports
     */
    public record Settings(RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit, Duration leaseTtl) {
        public Settings {
            Objects.requireNonNull(breaker, "breaker");
            Objects.requireNonNull(tenantLimit, "tenantLimit");
            Objects.requireNonNull(leaseTtl, "leaseTtl");
        }
    }

    private final Clock clock;
    private final Duration leaseTtl;
    private final GuardRoundTrips roundTrips;
    private final Breaker breaker;
    private final HandlerLimits handlerLimits;
    private final TenantWindow tenantWindow;
    private final DeferralCounts deferralCounts;
    private final AdaptiveLimits adaptiveLimits;
    private final WaitCounts waitCounts;

    public Guard(Redis redis, Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit, Clock clock) {
        this(redis, keys, breaker, tenantLimit, clock, DEFAULT_LEASE_TTL);
    }

    public Guard(Redis redis, Keys keys, RunnerConfig.Breaker breaker, RunnerConfig.TenantLimit tenantLimit,
                 Clock clock, Duration leaseTtl) {
        this(redis, keys, new Settings(breaker, tenantLimit, leaseTtl), clock, Metrics.NONE);
    }

    public Guard(Redis redis, Keys keys, Settings settings, Clock clock, Metrics metrics) {
        Objects.requireNonNull(keys, "keys");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.leaseTtl = settings.leaseTtl();
        this.roundTrips = new GuardRoundTrips(redis, metrics);
        this.breaker = new Breaker(keys, settings.breaker(), roundTrips, clock);
        this.handlerLimits = new HandlerLimits(keys, settings.breaker(), settings.tenantLimit().shortestDeferral(), leaseTtl, roundTrips);
        this.deferralCounts = new DeferralCounts(keys, roundTrips);
        this.tenantWindow = new TenantWindow(keys, settings.tenantLimit(), roundTrips, deferralCounts, clock);
        this.adaptiveLimits = new AdaptiveLimits(keys);
        this.waitCounts = new WaitCounts(keys, roundTrips);
    }

    /** Admission for all groups of one SQS batch: ONE pipelined round trip in total. */
    public List<GroupAdmission> admit(List<GroupRequest> groups) {
        if (groups.isEmpty()) {
            return List.of();
        }
        long now = clock.millis();
        Pipeline pipeline = roundTrips.pipelineWithGiveBacks();
        List<Pipeline.Reply<HandlerLimits.Answer>> handlerAnswers = new ArrayList<>(groups.size());
        List<Candidate> asked = new ArrayList<>();
        Map<String, Long> tenantDelayByItem = new HashMap<>();
        for (GroupRequest group : groups) {
            handlerAnswers.add(pipeline.add(handlerLimits.admit(group, now, HandlerLimits.leasePrefix())));
            for (Candidate item : group.items()) {
                if (TenantWindow.skipsWindow(item, now)) {
                    tenantDelayByItem.put(item.itemId(), 0L);
                } else {
                    asked.add(item);
                }
            }
        }
        Map<String, List<Candidate>> itemsByTenant = TenantWindow.byTenant(asked);
        Map<String, Pipeline.Reply<List<TenantWindow.Answer>>> tenantAnswers = new LinkedHashMap<>();
        itemsByTenant.forEach((tenant, ids) -> tenantAnswers.put(tenant, pipeline.add(tenantWindow.admit(tenant, ids, now, Duration.ZERO))));

        Optional<FailOpen> failedOpen = roundTrips.run(pipeline, "admission", "admitting " + groups.size() + " groups without limits");
        if (failedOpen.isPresent()) {
            return groups.stream().map(group -> admitAll(group, failedOpen.get())).toList();
        }

        itemsByTenant.forEach((tenant, ids) -> {
            List<TenantWindow.Answer> answers = tenantAnswers.get(tenant).get();
            for (int i = 0; i < ids.size(); i++) {
                tenantDelayByItem.put(ids.get(i).itemId(), answers.get(i).delayMs());
            }
        });

        List<GroupAdmission> admissions = new ArrayList<>(groups.size());
        Map<Refund, List<Candidate>> refunds = new LinkedHashMap<>();
        Map<DeferReason, Integer> deferrals = new EnumMap<>(DeferReason.class);
        Map<String, Map<WaitCounts.Cause, Integer>> waits = new LinkedHashMap<>();
        Set<String> breakersNotClosed = new LinkedHashSet<>();
        for (int g = 0; g < groups.size(); g++) {
            GroupRequest group = groups.get(g);
            HandlerLimits.Answer handler = handlerAnswers.get(g).get();
            if (handler.breakerNotClosed()) {
                breakersNotClosed.add(group.integrationKey());
            }
            List<Admission> decisions = new ArrayList<>(group.items().size());
            List<String> handlerReleases = new ArrayList<>();
            for (int i = 0; i < group.items().size(); i++) {
                Candidate item = group.items().get(i);
                AdmissionRules.Combined combined = AdmissionRules.combine(
                        item.itemId(), handler.verdicts().get(i), tenantDelayByItem.get(item.itemId()), now);
                decisions.add(combined.admission());
                if (combined.admission() instanceof Admission.Deferred deferred) {
                    deferrals.merge(deferred.reason(), 1, Integer::sum);
                    WaitCounts.add(waits, item.tenantId(), new WaitCounts.Cause(group.integrationKey(), group.handlerKey(),
                            deferred.reason().wireName()));
                } else if (combined.admission() instanceof Admission.Paused) {
                    WaitCounts.add(waits, item.tenantId(), new WaitCounts.Cause(group.integrationKey(), group.handlerKey(), WAIT_PAUSED));
                }
                if (combined.releaseHandler()) {
                    handlerReleases.add(item.itemId());
                }
                // An item on its producer's slot keeps it when deferred, as an item keeps a future slot:
                // asked again it is admitted on it (and would be, without a second count, were it refunded).
                if (!TenantWindow.holdsSlot(item, now) || combined.admission() instanceof Admission.Paused) {
                    combined.refundTenantUpTo().ifPresent(upTo ->
                            refunds.computeIfAbsent(new Refund(item.tenantId(), upTo), r -> new ArrayList<>()).add(item));
                }
            }
            // Leases were granted for the calls the handler script admitted; items the tenant window
            // deferred need none, so leases beyond the calls still to make go back at once.
            List<String> kept = new ArrayList<>();
            List<String> surplus = new ArrayList<>();
            AdmissionRules.keepLeases(group, decisions, handler.leaseTokens(), handler.tenantLanes(), kept, surplus);
            if (!handlerReleases.isEmpty() || !surplus.isEmpty()) {
                roundTrips.giveBack(handlerLimits.release(group.integrationKey(), group.handlerKey(), surplus, handlerReleases, now));
            }
            admissions.add(new GroupAdmission(group, decisions, null, handler.breakerClean(), kept, now, handler.adapted(),
                    handler.tenantLanes()));
        }
        refunds.forEach((refund, items) -> roundTrips.giveBack(tenantWindow.refund(refund.tenantId(), items, refund.upToMs())));
        deferralCounts.count(deferrals, now);
        waitCounts.count(waits, now);
        breakersNotClosed.forEach(roundTrips.metrics()::breakerOpen);
        return admissions;
    }

    /**
     * Reserves tenant-window slots for items about to be enqueued, so a producer can send each
     * with the delay until its slot (deferral at the source: a tenant's backlog waits invisible in
     * SQS instead of standing in front of other tenants' items and cycling through the worker).
     * The item carries its slot ({@link TenantSlot#atMs}), and the worker's admission admits it on
     * that slot ({@link TenantWindow#skipsWindow}); by priority, so a webhook passes its tenant's
     * own manual backlog (admitTenant-4.lua). Returns each item's
     * slot and delay (zero = room now, else at least a second). One pipelined round trip for all
     * tenants, however many items; Redis down: no slot, no delay (fail-open, the worker's
     * admission then counts the items).
     */
    public Map<String, TenantSlot> reserveTenantSlots(List<Candidate> items) {
        return reserveTenantSlots(items, Duration.ZERO);
    }

    /**
     * The same, up to a horizon: an item of a lower priority whose slot would lie further ahead
     * than {@code horizon} gets {@link TenantSlot#HELD} and nothing is reserved for it (its producer
     * keeps it back, and offers it again as its slots come near). Zero: no horizon.
     */
    public Map<String, TenantSlot> reserveTenantSlots(List<Candidate> items, Duration horizon) {
        return reserveTenantSlots(items, horizon, itemId -> null);
    }

    /**
     * The same, counting for "why is it waiting?" each item sent with a delay or held, by its
     * handler ({@code handlerOf}: the item's handler, by itemId; null: not counted). A producer may
     * make no further round trip of its own for a long time: the counts are sent now, with whatever
     * else waits, rather than left to ride along.
     */
    public Map<String, TenantSlot> reserveTenantSlots(List<Candidate> items, Duration horizon,
                                                      java.util.function.Function<String, dev.runner.integration.HandlerRef> handlerOf) {
        Map<String, TenantSlot> slots = tenantWindow.reserveSlots(items, horizon);
        Map<String, Map<WaitCounts.Cause, Integer>> waits = new LinkedHashMap<>();
        for (Candidate item : items) {
            TenantSlot slot = slots.get(item.itemId());
            dev.runner.integration.HandlerRef handler = handlerOf.apply(item.itemId());
            if (handler != null && slot != null && (slot.held() || !slot.delay().isZero())) {
                WaitCounts.add(waits, item.tenantId(), new WaitCounts.Cause(handler.integrationKey(), handler.handlerKey(),
                        slot.held() ? WAIT_BACKLOG_HORIZON : DeferReason.TENANT_LIMIT.wireName()));
            }
        }
        waitCounts.count(waits, clock.millis());
        roundTrips.flushGiveBacks("dropping deferral counts and give-backs; leases expire by their TTL");
        return slots;
    }

    /** The reason "why is it waiting?" names an item held in Postgres beyond its tenant's horizon. */
    public static final String WAIT_BACKLOG_HORIZON = "backlog_horizon";
    /** The reason "why is it waiting?" names an item parked because its handler is paused. */
    public static final String WAIT_PAUSED = "paused";

    /**
     * Gives back the future tenant-window slots of a cancelled run's items at once (releaseRunSlots-4.lua):
     * the tenant's next items take them instead of waiting behind slots no item will use. Its items'
     * leases are given back by the batches that hold them (an item of a cancelled run is not claimed,
     * so its batch reports at once). Returns how many slots went back; fail-open (0) when Redis is away.
     */
    public int releaseRun(String tenantId, java.util.UUID runId) {
        return tenantWindow.releaseRun(tenantId, runId);
    }

    /** How far ahead each tenant's window is reserved (its latest slot, epoch ms; now when none); empty when Redis cannot tell. */
    public Optional<Map<String, Long>> tenantReach(List<String> tenantIds) {
        return tenantWindow.reach(tenantIds);
    }

    /**
     * After the handler calls: breaker outcomes (recordOutcome), release of the calls' leases, probes
     * and urgent markers (releaseHandler), and what the partner's answers teach the adaptive limits
     * (adaptLimits); ONE pipelined round trip in total.
     */
    public void report(List<GroupReport> reports) {
        long now = clock.millis();
        Pipeline pipeline = roundTrips.pipelineWithGiveBacks();
        Map<String, List<Pipeline.Reply<Breaker.Transitions>>> transitions = new LinkedHashMap<>();
        Map<GroupReport, Pipeline.Reply<List<AdaptiveLimits.Event>>> adaptations = new LinkedHashMap<>();
        for (GroupReport report : reports) {
            if (report.isEmpty()) {
                continue;
            }
            if (!report.breakerCalls().isEmpty()) {
                transitions.computeIfAbsent(report.integrationKey(), k -> new ArrayList<>())
                        .add(pipeline.add(Pipeline.Request.of(breaker.report(report, now), Breaker.Transitions::of)));
            }
            if (!report.leaseTokens().isEmpty() || !report.admittedItemIds().isEmpty()) {
                pipeline.send(handlerLimits.releaseCalled(report.integrationKey(), report.handlerKey(), report.leaseTokens(),
                        report.admittedItemIds()));
            }
            if (report.adaptiveNews()) {
                adaptations.put(report, pipeline.add(adaptiveLimits.feedback(report, now)));
            }
        }
        if (pipeline.isEmpty()) {
            return;
        }
        if (roundTrips.run(pipeline, "report", "dropping " + reports.size() + " breaker reports; leases expire after " + leaseTtl).isPresent()) {
            return;
        }
        Metrics metrics = roundTrips.metrics();
        transitions.forEach((integrationKey, replies) -> replies.forEach(reply -> {
            switch (reply.get().integration()) {
                case OPENED -> metrics.breakerOpened(integrationKey);
                case CLOSED -> metrics.breakerClosed(integrationKey);
                case NONE -> { }
            }
            reply.get().tenants().forEach((tenantId, transition) -> {
                switch (transition) {
                    case OPENED -> metrics.tenantBreakerOpened(integrationKey, tenantId);
                    case CLOSED -> metrics.tenantBreakerClosed(integrationKey, tenantId);
                    case NONE -> { }
                }
            });
        }));
        adaptations.forEach((report, reply) -> reply.get().forEach(event -> metrics.adaptiveLimit(report.integrationKey(),
                report.handlerKey(), event.tenantId(), event.change().name().toLowerCase(java.util.Locale.ROOT))));
    }

    /**
     * A call was answered 429 with Retry-After: the partner's answer goes to the adaptive limits now,
     * in a round trip of its own, so every worker stops calling into that scope at once rather than
     * when this batch reports (adaptLimits-2.lua; the batch's report tells it again, which changes
     * nothing: a wave of 429s cuts a scope once). Fail-open: if Redis cannot take it, the report tells it.
     */
    public void throttled(GroupAdmission admission, GroupReport.Call call) {
        if (admission.failedOpen()) {
            return;
        }
        GroupRequest group = admission.request();
        GroupReport report = new GroupReport(group.integrationKey(), group.handlerKey(), List.of(call), List.of(), List.of(),
                group.limits(), admission.admittedAtMs(), true);
        Pipeline pipeline = new Pipeline();
        Pipeline.Reply<List<AdaptiveLimits.Event>> events = pipeline.add(adaptiveLimits.feedback(report, clock.millis()));
        if (roundTrips.run(pipeline, "adaptive stop", "the batch's report tells it").isEmpty()) {
            events.get().forEach(event -> roundTrips.metrics().adaptiveLimit(group.integrationKey(), group.handlerKey(), event.tenantId(),
                    event.change().name().toLowerCase(java.util.Locale.ROOT)));
        }
    }

    /**
     * The breaker as of now, as the next admission or report will see it (readBreaker-2.lua applies
     * the scripts' own open → half-open rule); closed when Redis cannot tell (the fail-open policy).
     */
    public BreakerSnapshot breaker(String integrationKey) {
        return breaker.read(integrationKey);
    }

    /**
     * Gives back, on the next round trip this Guard makes, what an admission took for items that
     * were admitted but not called after all (a lane that ran out of time): their rate entries,
     * probes and urgent markers. Their leases go back with the group's report.
     */
    public void giveBack(GroupAdmission admission, List<String> itemIds) {
        handlerLimits.giveBack(admission, itemIds);
    }

    /**
     * Gives a lease back now, in a round trip of its own: its lane has no call left while the
     * admission's other lanes still run, so a worker waiting for a lease of this handler need not
     * wait for the whole batch. It carries nothing else (pending give-backs stay for the batch's
     * own round trips, where a failure cannot lose them). Fail-open: if Redis cannot take it now,
     * the report gives it back.
     *
     * @return whether it went back (else it is still the report's to give back)
     */
    public boolean releaseLease(GroupAdmission admission, String leaseToken) {
        return handlerLimits.releaseLease(admission, leaseToken);
    }

    /**
     * Waits for one of the handler's leases to be given back, up to {@code wait}: an admission that
     * found none free left the waiters flag, so every lease given back from then on rings the
     * handler's doorbell, and this blocks on it (a blocking pop on a connection of its own) instead
     * of asking admission again and again. A ring says a lease came back, not that it is this
     * worker's: the caller asks admission again. Redis away: a short sleep instead, after which
     * the caller's next admission fails open.
     *
     * @return whether a ring came (else the wait ran out)
     */
    public boolean awaitLease(String integrationKey, String handlerKey, Duration wait) {
        return handlerLimits.awaitLease(integrationKey, handlerKey, wait);
    }

    /**
     * Redis mirror of Postgres' paused_handlers.
     *
     * @throws dev.runner.redis.RedisUnavailableException the mirror was not updated
     */
    public void setPaused(String integrationKey, String handlerKey, boolean paused) {
        handlerLimits.setPaused(integrationKey, handlerKey, paused);
    }

    private static GroupAdmission admitAll(GroupRequest group, FailOpen why) {
        List<Admission> admitted = group.items().stream()
                .<Admission>map(item -> new Admission.Admitted(item.itemId()))
                .toList();
        return new GroupAdmission(group, admitted, why, false, List.of(), 0);
    }

    /** Tenant slots to give back: those at or before upToMs. */
    private record Refund(String tenantId, long upToMs) {}
}
