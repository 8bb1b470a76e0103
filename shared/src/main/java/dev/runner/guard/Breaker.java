package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * An integration's circuit breaker (rules in the package comment): what a report of handler
 * calls tells it (reportOutcome-6.lua, which also releases the calls' leases) and how it reads
 * as of now (readBreaker-1.lua). Admission checks it inside the handler script, beside the
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
     * The breaker as of now, as the next admission or report will see it (readBreaker-1.lua applies
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

    /** readBreaker-1.lua, for a caller that holds no other script arguments (the operator's readings too). */
    static Pipeline.Request<BreakerSnapshot> read(Keys keys, Duration openFor, String integrationKey, long now) {
        Redis.Call call = new Redis.Call(Script.READ_BREAKER, List.of(keys.breaker(integrationKey)),
                List.of(Long.toString(now), Long.toString(openFor.toMillis())));
        return Pipeline.Request.of(call, reply -> {
            List<?> fields = (List<?>) reply;
            return new BreakerSnapshot(integrationKey, BreakerState.fromWire((String) fields.get(0)),
                    ((Long) fields.get(1)).intValue(), ((Long) fields.get(2)).intValue(),
                    (Long) fields.get(3), (Long) fields.get(4));
        });
    }

    /** reportOutcome-6.lua for one group; {@link Transition#of} reads its reply. */
    Redis.Call report(GroupReport report, long now) {
        String integration = report.integrationKey();
        List<String> args = new ArrayList<>();
        args.add(Long.toString(now));
        args.add(Integer.toString(settings.failureThreshold()));
        args.add(Long.toString(settings.openFor().toMillis()));
        args.add(Integer.toString(settings.halfOpenSuccesses()));
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
}
