package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A tenant's sliding window of admissions, with slots reserved ahead and paced (admitTenant-4.lua),
 * given back when another check deferred the item after all (refundTenant-1.lua) or its run was
 * cancelled (releaseRunSlots-4.lua); slots reserved at the source, before items are enqueued
 * ({@link #reserveSlots}), up to a horizon. Keys tagged by tenant.
 */
final class TenantWindow {

    /** The tenant limit's window. */
    static final Duration LENGTH = Duration.ofMinutes(1);
    /** How much sooner than the window's end a slot reserved at the source stops being trusted (see {@link #holdsSlot}). */
    static final Duration SLOT_MARGIN = Duration.ofSeconds(10);
    /**
     * Most items one admitTenant call carries: a dispatch of any size is cut into calls of this
     * many (pipelined all the same), so no single script holds Redis for long.
     */
    static final int MAX_ITEMS_PER_CALL = 1_000;

    /**
     * The priorities whose future slots a more urgent item may take: every trigger's but the most
     * urgent's, as admitTenant-4.lua's backlog sets (its key count is theirs plus the window).
     */
    static final List<Integer> BACKLOG_PRIORITIES = Arrays.stream(Trigger.values()).map(Trigger::priority)
            .distinct().sorted().skip(1).toList();

    /** What admitTenant-4.lua answered for one item, as it codes it. */
    enum Outcome {
        /** Admitted now. */
        NOW,
        /** A slot reserved ahead; {@code ms} is the delay until it. */
        RESERVED,
        /** Admitted on the slot it already had; {@code ms} is how long ago that slot came due. */
        ON_SLOT,
        /** Not reserved: its slot would lie beyond the horizon. */
        HELD;

        static Outcome of(long code) {
            return switch ((int) code) {
                case 0 -> NOW;
                case 1 -> RESERVED;
                case 2 -> ON_SLOT;
                case 3 -> HELD;
                default -> throw new IllegalStateException("unknown admitTenant outcome " + code);
            };
        }
    }

    /** One item's answer. */
    record Answer(Outcome outcome, long ms) {

        /** The delay before the item may be called: zero when admitted. */
        long delayMs() {
            return outcome == Outcome.RESERVED ? Math.max(1, ms) : 0;
        }
    }

    private final Keys keys;
    private final RunnerConfig.TenantLimit limit;
    private final GuardRoundTrips roundTrips;
    private final DeferralCounts deferralCounts;
    private final Clock clock;

    TenantWindow(Keys keys, RunnerConfig.TenantLimit limit, GuardRoundTrips roundTrips, DeferralCounts deferralCounts, Clock clock) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.limit = Objects.requireNonNull(limit, "tenantLimit");
        if (limit.perMinute() < 1) {
            throw new IllegalArgumentException("tenant perMinute < 1: " + limit.perMinute());
        }
        this.roundTrips = Objects.requireNonNull(roundTrips, "roundTrips");
        this.deferralCounts = Objects.requireNonNull(deferralCounts, "deferralCounts");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    Duration shortestDeferral() {
        return limit.shortestDeferral();
    }

    private List<String> keyList(String tenantId) {
        List<String> keyList = new ArrayList<>(1 + BACKLOG_PRIORITIES.size());
        keyList.add(keys.tenantWindow(tenantId));
        BACKLOG_PRIORITIES.forEach(priority -> keyList.add(keys.tenantBacklog(tenantId, priority)));
        return keyList;
    }

    /**
     * admitTenant-4.lua for one tenant's items, in calls of at most {@link #MAX_ITEMS_PER_CALL}
     * items (they run one after the other on the tenant's slot, as one call would); the answer is
     * each item's, in order. {@code horizon} zero: no item is held.
     */
    Pipeline.Request<List<Answer>> admit(String tenantId, List<Candidate> items, long now, Duration horizon) {
        List<String> keyList = keyList(tenantId);
        List<Redis.Call> calls = new ArrayList<>();
        for (int from = 0; from < items.size(); from += MAX_ITEMS_PER_CALL) {
            List<Candidate> chunk = items.subList(from, Math.min(items.size(), from + MAX_ITEMS_PER_CALL));
            List<String> args = new ArrayList<>(5 + BACKLOG_PRIORITIES.size() + 2 * chunk.size());
            args.add(Long.toString(now));
            args.add(Long.toString(LENGTH.toMillis()));
            args.add(Integer.toString(limit.perMinute()));
            args.add(Long.toString(limit.shortestDeferral().toMillis()));
            args.add(Long.toString(horizon.toMillis()));
            BACKLOG_PRIORITIES.forEach(priority -> args.add(Integer.toString(priority)));
            for (Candidate item : chunk) {
                args.add(item.windowMember());
                args.add(Integer.toString(item.priority()));
            }
            calls.add(new Redis.Call(Script.ADMIT_TENANT, keyList, args));
        }
        int count = items.size();
        return new Pipeline.Request<>(calls, replies -> {
            List<Answer> answers = new ArrayList<>(count);
            for (Object reply : replies) {
                List<?> values = (List<?>) reply;
                for (int i = 0; i + 1 < values.size(); i += 2) {
                    answers.add(new Answer(Outcome.of((Long) values.get(i)), (Long) values.get(i + 1)));
                }
            }
            if (answers.size() != count) {
                throw new IllegalStateException("admitTenant answered " + answers.size() + " items for " + count);
            }
            return answers;
        });
    }

    /** refundTenant-1.lua: gives back the items' slots at or before the cutoff. */
    Redis.Call refund(String tenantId, List<Candidate> items, long cutoffMs) {
        List<String> args = new ArrayList<>(1 + items.size());
        args.add(Long.toString(cutoffMs));
        items.forEach(item -> args.add(item.windowMember()));
        return new Redis.Call(Script.REFUND_TENANT, List.of(keys.tenantWindow(tenantId)), args);
    }

    /** releaseRunSlots-4.lua: the future slots of a run's items given back; returns how many (0 when Redis cannot tell: fail-open). */
    int releaseRun(String tenantId, java.util.UUID runId) {
        Pipeline pipeline = roundTrips.pipelineWithGiveBacks();
        Pipeline.Reply<Long> released = pipeline.add(Pipeline.Request.of(releaseRunCall(tenantId, runId, clock.millis()),
                reply -> (Long) ((List<?>) reply).getFirst()));
        if (roundTrips.run(pipeline, "run slots release", "the cancelled run's slots pass unused").isPresent()) {
            return 0;
        }
        return released.get().intValue();
    }

    /**
     * How far ahead each tenant's window is reserved: its latest slot (epoch ms), or now when it
     * holds none ahead. One pipelined round trip; empty when Redis cannot tell.
     */
    java.util.Optional<Map<String, Long>> reach(List<String> tenants) {
        long now = clock.millis();
        Pipeline pipeline = new Pipeline();
        Map<String, Pipeline.Reply<Object>> latest = new LinkedHashMap<>();
        tenants.forEach(tenant -> latest.put(tenant, pipeline.read(new Redis.Read.Highest(keys.tenantWindow(tenant)))));
        if (roundTrips.run(pipeline, "tenant window read", "reading no tenant's reservations").isPresent()) {
            return java.util.Optional.empty();
        }
        Map<String, Long> reach = new LinkedHashMap<>();
        latest.forEach((tenant, reply) -> reach.put(tenant, reply.get() == null ? now : Math.max(now, (long) Math.ceil((Double) reply.get()))));
        return java.util.Optional.of(reach);
    }

    Redis.Call releaseRunCall(String tenantId, java.util.UUID runId, long now) {
        return new Redis.Call(Script.RELEASE_RUN_SLOTS, keyList(tenantId), List.of(Long.toString(now), Candidate.runTagOf(runId)));
    }

    /**
     * Reserves slots for items about to be enqueued (see {@link Guard#reserveTenantSlots}); an item
     * whose slot would lie beyond {@code horizon} gets {@link TenantSlot#HELD}.
     */
    Map<String, TenantSlot> reserveSlots(List<Candidate> items, Duration horizon) {
        Map<String, TenantSlot> delays = new HashMap<>();
        if (items.isEmpty()) {
            return delays;
        }
        Map<String, List<Candidate>> itemIdsByTenant = byTenant(items);
        long now = clock.millis();
        Pipeline pipeline = new Pipeline();
        Map<String, Pipeline.Reply<List<Answer>>> answers = new LinkedHashMap<>();
        itemIdsByTenant.forEach((tenant, ids) -> answers.put(tenant, pipeline.add(admit(tenant, ids, now, horizon))));
        if (roundTrips.run(pipeline, "slot reservation",
                "enqueueing " + itemIdsByTenant.size() + " tenants' items without reserved slots").isPresent()) {
            items.forEach(item -> delays.put(item.itemId(), TenantSlot.NONE));
            return delays;
        }
        int reserved = 0;
        for (var tenant : itemIdsByTenant.entrySet()) {
            List<Answer> answer = answers.get(tenant.getKey()).get();
            int tenantReserved = 0;
            for (int i = 0; i < tenant.getValue().size(); i++) {
                Answer one = answer.get(i);
                TenantSlot slot = switch (one.outcome()) {
                    case NOW -> new TenantSlot(Duration.ZERO, now);
                    case RESERVED -> new TenantSlot(AdmissionRules.reservedDelay(one.delayMs()), now + one.ms());
                    // A slot the item already had (a re-dispatch): its own time, so it is trusted no longer than it lasts.
                    case ON_SLOT -> new TenantSlot(Duration.ZERO, now - one.ms());
                    case HELD -> TenantSlot.HELD;
                };
                delays.put(tenant.getValue().get(i).itemId(), slot);
                tenantReserved += one.outcome() == Outcome.RESERVED ? 1 : 0;
            }
            if (tenantReserved > 0) {
                roundTrips.metrics().tenantWindowDeferrals(tenant.getKey(), tenantReserved);
            }
            reserved += tenantReserved;
        }
        if (reserved > 0) {
            deferralCounts.count(Map.of(DeferReason.TENANT_LIMIT, reserved), now);
        }
        return delays;
    }

    /** Items grouped by tenant, in their order. */
    static Map<String, List<Candidate>> byTenant(List<Candidate> items) {
        Map<String, List<Candidate>> byTenant = new LinkedHashMap<>();
        items.forEach(item -> byTenant.computeIfAbsent(item.tenantId(), t -> new ArrayList<>()).add(item));
        return byTenant;
    }

    /**
     * The item is of the most urgent priority and comes with a slot its producer reserved, now due
     * and still in the window: admission need not ask the tenant's window (it would find the slot
     * and admit on it). A less urgent item's slot may have been taken by a more urgent one since,
     * so it asks. The margin covers clocks a few seconds apart; an older slot may have left the
     * window, so the item is counted again.
     */
    static boolean skipsWindow(Candidate item, long nowMs) {
        return item.priority() < BACKLOG_PRIORITIES.getFirst() && holdsSlot(item, nowMs);
    }

    /**
     * The item comes with a slot its producer reserved, now due and still in the window: deferred
     * by another check, it keeps it.
     */
    static boolean holdsSlot(Candidate item, long nowMs) {
        return item.tenantSlotAt() > 0 && item.tenantSlotAt() <= nowMs
                && nowMs - item.tenantSlotAt() < LENGTH.toMillis() - SLOT_MARGIN.toMillis();
    }
}
