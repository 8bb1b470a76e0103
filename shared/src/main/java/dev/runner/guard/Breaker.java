package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An integration's circuit breaker (rules in the package comment): what a report of handler
 * calls tells it (recordOutcome-3.lua; the calls' leases go back by releaseHandler-6.lua in the
 * same round trip) and how it reads as of now (readBreaker-2.lua). Admission checks it inside the handler script, beside the
 * handler's limits ({@link HandlerLimits}).
 */
final class Breaker {

    private final Keys keys;
    private final RunnerConfig.Breaker settings;
    private final GuardRoundTrips roundTrips;
    private final Clock clock;

    Breaker(Keys keys, RunnerConfig.Breaker settings, GuardRoundTrips roundTrips, Clock clock) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.settings = Objects.requireNonNull(settings, "breaker");
        if (settings.failureThreshold() < 1) {
            throw new IllegalArgumentException("failureThreshold < 1: " + settings.failureThreshold());
        }
        if (settings.halfOpenSuccesses() < 1) {
            throw new IllegalArgumentException("halfOpenSuccesses < 1: " + settings.halfOpenSuccesses());
        }
        this.roundTrips = Objects.requireNonNull(roundTrips, "roundTrips");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    RunnerConfig.Breaker settings() {
        return settings;
    }

    /**
     * The breaker as of now, as the next admission or report will see it (readBreaker-2.lua applies
     * the scripts' own open → half-open rule); closed when Redis cannot tell (the fail-open policy).
     */
    BreakerSnapshot read(String integrationKey) {
        Pipeline pipeline = new Pipeline();
        Pipeline.Reply<BreakerSnapshot> snapshot = pipeline.add(read(keys, settings.openFor(), integrationKey, clock.millis()));
        if (roundTrips.run(pipeline, "breaker read", "breaker of " + integrationKey + " reported closed").isPresent()) {
            return BreakerSnapshot.closed(integrationKey);
        }
        return snapshot.get();
    }

    /** readBreaker-2.lua, for a caller that holds no other script arguments (the operator's readings too). */
    static Pipeline.Request<BreakerSnapshot> read(Keys keys, Duration openFor, String integrationKey, long now) {
        Redis.Call call = new Redis.Call(Script.READ_BREAKER, List.of(keys.breaker(integrationKey), keys.tenantScopes(integrationKey)),
                List.of(Long.toString(now), Long.toString(openFor.toMillis())));
        return Pipeline.Request.of(call, reply -> {
            List<?> fields = (List<?>) reply;
            List<BreakerSnapshot.TenantScope> tenants = new ArrayList<>();
            for (int i = 5; i + 6 <= fields.size(); i += 6) {
                tenants.add(new BreakerSnapshot.TenantScope((String) fields.get(i), BreakerState.fromWire((String) fields.get(i + 1)),
                        ((Long) fields.get(i + 2)).intValue(), ((Long) fields.get(i + 3)).intValue(),
                        (Long) fields.get(i + 4), (Long) fields.get(i + 5)));
            }
            tenants.sort(java.util.Comparator.comparing(BreakerSnapshot.TenantScope::tenantId));
            return new BreakerSnapshot(integrationKey, BreakerState.fromWire((String) fields.get(0)),
                    ((Long) fields.get(1)).intValue(), ((Long) fields.get(2)).intValue(),
                    (Long) fields.get(3), (Long) fields.get(4), tenants);
        });
    }

    /** recordOutcome-3.lua for the calls of one group the breaker hears; {@link Transitions#of} reads its reply. */
    Redis.Call report(GroupReport report, long now) {
        String integration = report.integrationKey();
        List<String> args = new ArrayList<>();
        args.add(Long.toString(now));
        args.add(Integer.toString(settings.failureThreshold()));
        args.add(Long.toString(settings.openFor().toMillis()));
        args.add(Integer.toString(settings.halfOpenSuccesses()));
        for (GroupReport.Call call : report.breakerCalls()) {
            args.add(call.up() ? "1" : "0");
            args.add(Integer.toString(call.itemIds().size()));
            args.addAll(call.itemIds());
            args.add(Integer.toString(call.tenantIds().size()));
            args.addAll(call.tenantIds());
        }
        return new Redis.Call(Script.RECORD_OUTCOME, List.of(keys.breaker(integration), keys.probes(integration),
                keys.tenantScopes(integration)), args);
    }

    /** A breaker transition, as recordOutcome-3.lua codes it. */
    enum Transition {
        NONE, OPENED, CLOSED;

        static Transition of(long code) {
            return switch ((int) code) {
                case 1 -> OPENED;
                case 2 -> CLOSED;
                default -> NONE;
            };
        }
    }

    /**
     * The transitions a report made: the integration's, and those of the tenant scopes it changed.
     */
    record Transitions(Transition integration, Map<String, Transition> tenants) {

        static Transitions of(Object reply) {
            List<?> values = (List<?>) reply;
            Transition integration = Transition.of(values.size() > 1 ? (Long) values.get(1) : 0L);
            Map<String, Transition> tenants = new LinkedHashMap<>();
            for (int i = 2; i + 1 < values.size(); i += 2) {
                tenants.put((String) values.get(i), Transition.of((Long) values.get(i + 1)));
            }
            return new Transitions(integration, tenants);
        }
    }
}
