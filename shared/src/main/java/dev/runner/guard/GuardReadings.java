package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.integration.HandlerRef;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the guard's Redis state says, for operators: breakers, leases in use and admissions of the
 * last minute per handler, tenant windows, deferrals per minute. Plain reads (HGETALL, ZCOUNT),
 * pipelined: one round trip per call, whatever the number of handlers or tenants. Looking takes
 * nothing and expires nothing. Redis away: empty (the caller shows "unknown"), never an error.
 */
public final class GuardReadings {

    private static final Logger log = LoggerFactory.getLogger(GuardReadings.class);
    private static final long MINUTE_MS = 60_000;

    /**
     * A handler's use of its limits now.
     *
     * @param leasesInUse         live concurrency leases (not expired)
     * @param admittedLastMinute  admissions in the handler's rate window (the last 60 s)
     */
    public record HandlerUsage(long leasesInUse, long admittedLastMinute) {}

    /** Breakers by integration, usage and adaptive scopes by handler, read together. */
    public record HandlerReadings(Map<String, BreakerSnapshot> breakers, Map<HandlerRef, HandlerUsage> usage,
                                  Map<HandlerRef, FlowReading> flows) {

        public HandlerReadings(Map<String, BreakerSnapshot> breakers, Map<HandlerRef, HandlerUsage> usage) {
            this(breakers, usage, Map.of());
        }
    }

    /**
     * An adaptive scope of a handler (AIMD: docs/resilience.md), as adaptLimits-2.lua left it.
     *
     * @param tenantId          the tenant whose scope it is; null for the handler's own
     * @param concurrency       its effective concurrency, null when as configured
     * @param ratePerMinute     its effective rate, null when as configured
     * @param stoppedUntil      until when no call goes into it (the partner's Retry-After), null when not stopped
     * @param lastRetryAfterMs  the last Retry-After the partner sent it, null when none
     * @param reason            why it was last cut: 429 or timeout; null when never cut
     */
    public record AdaptiveScope(String tenantId, Long concurrency, Long ratePerMinute, Instant stoppedUntil, Long lastRetryAfterMs,
                                Instant lastRetryAfterAt, String reason, Instant cutAt) {

        /** A flow hash field ('h' or 't:tenant') and its value "conc|rate|stopUntil|raMs|raAt|reason|cutAt|changedAt|strikes". */
        static AdaptiveScope parse(String field, String value, long nowMs) {
            String[] f = value.split("\\|", -1);
            long stop = number(f, 2);
            return new AdaptiveScope(field.startsWith("t:") ? field.substring(2) : null, positive(number(f, 0)), positive(number(f, 1)),
                    stop > nowMs ? Instant.ofEpochMilli(stop) : null, positive(number(f, 3)), instant(number(f, 4)),
                    f.length > 5 && !f[5].isEmpty() ? f[5] : null, instant(number(f, 6)));
        }

        private static long number(String[] fields, int i) {
            try {
                return i < fields.length ? (long) Double.parseDouble(fields[i]) : 0;
            } catch (NumberFormatException e) {
                return 0;
            }
        }

        private static Long positive(long value) {
            return value > 0 ? value : null;
        }

        private static Instant instant(long ms) {
            return ms > 0 ? Instant.ofEpochMilli(ms) : null;
        }
    }

    /** A handler's adaptive scopes (its own first, if any) and the tenants waiting for one of its leases. */
    public record FlowReading(List<AdaptiveScope> scopes, List<String> waitingTenants) {

        public static final FlowReading NONE = new FlowReading(List.of(), List.of());

        static FlowReading of(Map<String, String> hash, long nowMs) {
            List<AdaptiveScope> scopes = new ArrayList<>();
            List<String> waiting = new ArrayList<>();
            new java.util.TreeMap<>(hash).forEach((field, value) -> {
                if (field.startsWith("w:")) {
                    String[] mark = value.split("\\|");
                    if (mark.length == 2 && Long.parseLong(mark[1]) > nowMs) {
                        waiting.add(field.substring(2));
                    }
                } else if (field.equals("h") || field.startsWith("t:")) {
                    scopes.add(AdaptiveScope.parse(field, value, nowMs));
                }
            });
            scopes.sort(java.util.Comparator.comparing(scope -> scope.tenantId() == null ? "" : "t:" + scope.tenantId()));
            return new FlowReading(scopes, waiting);
        }

        /** The handler's own scope, if it holds state. */
        public Optional<AdaptiveScope> handlerScope() {
            return scopes.stream().filter(scope -> scope.tenantId() == null).findFirst();
        }

        /** A tenant's scope, if it holds state. */
        public Optional<AdaptiveScope> tenantScope(String tenantId) {
            return scopes.stream().filter(scope -> tenantId.equals(scope.tenantId())).findFirst();
        }
    }

    /** A tenant's deferrals of the last minutes by handler and reason ("why is it waiting?"). */
    public record TenantWaits(Map<HandlerRef, Map<String, Long>> byHandler) {}

    /**
     * A tenant's sliding window now.
     *
     * @param usedLastMinute slots taken in the last 60 s
     * @param reserved       slots reserved in the future: items sent with a delay, waiting for their turn
     */
    public record TenantUsage(long usedLastMinute, long reserved) {}

    /** Deferrals counted in the minute starting at {@code minute}. */
    public record MinuteDeferrals(Instant minute, Map<DeferReason, Long> byReason) {}

    private final Redis redis;
    private final Keys keys;
    private final Duration breakerOpenFor;
    private final Clock clock;

    public GuardReadings(Redis redis, Keys keys, RunnerConfig.Breaker breaker, Clock clock) {
        this.redis = Objects.requireNonNull(redis, "redis");
        this.keys = Objects.requireNonNull(keys, "keys");
        this.breakerOpenFor = Objects.requireNonNull(breaker, "breaker").openFor();
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Breakers of the handlers' integrations (read through the scripts' own open → half-open rule,
     * readBreaker-2.lua) and each handler's usage; empty when Redis is away. One round trip.
     */
    public Optional<HandlerReadings> handlers(Collection<HandlerRef> handlers) {
        long now = clock.millis();
        Pipeline pipeline = new Pipeline();
        Map<String, Pipeline.Reply<BreakerSnapshot>> snapshots = new LinkedHashMap<>();
        for (HandlerRef handler : handlers) {
            snapshots.computeIfAbsent(handler.integrationKey(),
                    integration -> pipeline.add(Breaker.read(keys, breakerOpenFor, integration, now)));
        }
        Map<HandlerRef, List<Pipeline.Reply<Object>>> counts = new LinkedHashMap<>();
        for (HandlerRef handler : handlers) {
            counts.put(handler, List.of(
                    pipeline.read(new Redis.Read.Count(keys.leases(handler.integrationKey(), handler.handlerKey()), now, null)),
                    pipeline.read(new Redis.Read.Count(keys.rate(handler.integrationKey(), handler.handlerKey()), now - MINUTE_MS, null)),
                    pipeline.read(new Redis.Read.Hash(keys.flow(handler.integrationKey(), handler.handlerKey())))));
        }
        if (!run(pipeline, "handlers")) {
            return Optional.empty();
        }
        Map<String, BreakerSnapshot> breakers = new LinkedHashMap<>();
        snapshots.forEach((integration, snapshot) -> breakers.put(integration, snapshot.get()));
        Map<HandlerRef, HandlerUsage> usage = new LinkedHashMap<>();
        Map<HandlerRef, FlowReading> flows = new LinkedHashMap<>();
        counts.forEach((handler, replies) -> {
            usage.put(handler, new HandlerUsage((Long) replies.get(0).get(), (Long) replies.get(1).get()));
            flows.put(handler, FlowReading.of(hash(replies.get(2).get()), now));
        });
        return Optional.of(new HandlerReadings(breakers, usage, flows));
    }

    /** Each tenant's window; empty when Redis is away. */
    public Optional<Map<String, TenantUsage>> tenants(Collection<String> tenantIds) {
        long now = clock.millis();
        List<String> tenants = List.copyOf(tenantIds);
        List<Redis.Read> reads = new ArrayList<>(2 * tenants.size());
        for (String tenant : tenants) {
            reads.add(new Redis.Read.Count(keys.tenantWindow(tenant), now - Guard.TENANT_WINDOW.toMillis(), now));
            reads.add(new Redis.Read.Count(keys.tenantWindow(tenant), now, null));
        }
        return read(reads, "tenant windows").map(replies -> {
            Map<String, TenantUsage> usage = new LinkedHashMap<>();
            for (int t = 0; t < tenants.size(); t++) {
                usage.put(tenants.get(t), new TenantUsage((Long) replies.get(2 * t), (Long) replies.get(2 * t + 1)));
            }
            return usage;
        });
    }

    /**
     * A tenant's deferrals by handler and reason over the current and the previous five minutes
     * (countDeferrals-1.lua); empty when Redis is away.
     */
    public Optional<TenantWaits> tenantWaits(String tenantId) {
        long period = clock.millis() / WaitCounts.PERIOD.toMillis();
        return read(List.of(new Redis.Read.Hash(keys.tenantWaits(tenantId, period)), new Redis.Read.Hash(keys.tenantWaits(tenantId, period - 1))),
                "tenant waits").map(replies -> {
            Map<HandlerRef, Map<String, Long>> byHandler = new LinkedHashMap<>();
            for (Object reply : replies) {
                hash(reply).forEach((field, count) -> {
                    WaitCounts.Cause cause = WaitCounts.Cause.of(field);
                    if (cause != null) {
                        byHandler.computeIfAbsent(new HandlerRef(cause.integrationKey(), cause.handlerKey()), h -> new java.util.TreeMap<>())
                                .merge(cause.reason(), Long.parseLong(count), Long::sum);
                    }
                });
            }
            return new TenantWaits(byHandler);
        });
    }

    /**
     * Deferrals per minute, oldest first, {@code minutes} whole minutes ending with the current
     * one; a minute without deferrals has an empty map. Empty when Redis is away.
     */
    public Optional<List<MinuteDeferrals>> deferrals(int minutes) {
        long currentMinute = clock.millis() / MINUTE_MS;
        List<Redis.Read> reads = new ArrayList<>(minutes);
        for (long minute = currentMinute - minutes + 1; minute <= currentMinute; minute++) {
            reads.add(new Redis.Read.Hash(keys.deferrals(minute)));
        }
        return read(reads, "deferral counts").map(replies -> {
            List<MinuteDeferrals> perMinute = new ArrayList<>(minutes);
            for (int m = 0; m < minutes; m++) {
                Map<DeferReason, Long> byReason = new EnumMap<>(DeferReason.class);
                hash(replies.get(m)).forEach((reason, count) -> {
                    for (DeferReason known : DeferReason.values()) {
                        if (known.wireName().equals(reason)) {
                            byReason.put(known, Long.parseLong(count));
                        }
                    }
                });
                perMinute.add(new MinuteDeferrals(Instant.ofEpochMilli((currentMinute - minutes + 1 + m) * MINUTE_MS), byReason));
            }
            return perMinute;
        });
    }

    private Optional<List<Object>> read(List<Redis.Read> reads, String what) {
        if (reads.isEmpty()) {
            return Optional.of(List.of());
        }
        try {
            return Optional.of(redis.run(reads));
        } catch (RedisUnavailableException e) {
            log.warn("Redis unavailable, {} unknown: {}", what, e.toString());
            return Optional.empty();
        }
    }

    /** False when Redis is away (logged): the readings are then unknown, never an error. */
    private boolean run(Pipeline pipeline, String what) {
        if (pipeline.isEmpty()) {
            return true;
        }
        try {
            pipeline.run(redis);
            return true;
        } catch (RedisUnavailableException e) {
            log.warn("Redis unavailable, {} unknown: {}", what, e.toString());
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> hash(Object reply) {
        return reply == null ? Map.of() : (Map<String, String>) reply;
    }
}
