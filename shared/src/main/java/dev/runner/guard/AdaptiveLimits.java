package dev.runner.guard;

import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A handler's limits learnt from its partner's answers, AIMD (adaptLimits-2.lua): a 429 with
 * Retry-After stops the calls of its scope (the handler's, or a tenant's of it when the answers
 * single that tenant out) until then and cuts the scope's effective concurrency and rate
 * multiplicatively; two timeouts in a row cut it likewise; successes raise it additively, one step
 * per probe interval, up to the configured limits, where the scope is forgotten. Admission reads the
 * scopes in admitHandler-10.lua. State: one field per adapted scope in the handler's flow hash.
 */
final class AdaptiveLimits {

    /** A cut keeps this share (per mille) of a scope's effective limits. */
    static final int DECREASE_PER_MILLE = 700;
    /** The shortest time between two raises of a scope. */
    static final Duration PROBE_FLOOR = Duration.ofSeconds(10);
    /** Between two raises, at least this many of the scope's last Retry-After (a raise that overshoots costs one). */
    static final int PROBE_RETRY_AFTERS = 10;

    /** A change a report made to a scope, as adaptLimits-2.lua codes it. */
    enum Change {
        STOPPED, CUT, RAISED, RESTORED;

        static Change of(long code) {
            return switch ((int) code) {
                case 1 -> STOPPED;
                case 2 -> CUT;
                case 3 -> RAISED;
                case 4 -> RESTORED;
                default -> throw new IllegalStateException("unknown adaptLimits change " + code);
            };
        }
    }

    /** One change: the scope ('h' for the handler's, 't:tenant' for a tenant's) and what happened to it. */
    record Event(String scope, Change change) {

        /** The tenant of a tenant scope, or null for the handler's. */
        String tenantId() {
            return scope.startsWith("t:") ? scope.substring(2) : null;
        }
    }

    private final Keys keys;

    AdaptiveLimits(Keys keys) {
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /** adaptLimits-2.lua for a group's calls; the reply is the changes made. */
    Pipeline.Request<List<Event>> feedback(GroupReport report, long now) {
        List<String> args = new ArrayList<>();
        args.add(Long.toString(now));
        args.add(Integer.toString(report.limits().concurrency()));
        args.add(Integer.toString(report.limits().ratePerMinute()));
        args.add(Integer.toString(DECREASE_PER_MILLE));
        args.add(Long.toString(PROBE_FLOOR.toMillis()));
        args.add(Integer.toString(PROBE_RETRY_AFTERS));
        args.add(Long.toString(report.admittedAtMs()));
        for (GroupReport.Call call : report.calls()) {
            args.add(switch (call.observed()) {
                case ANSWERED -> "ok";
                case FAILED -> "failed";
                case TIMED_OUT -> "timeout";
                case THROTTLED -> "429";
            });
            args.add(Long.toString(call.retryAfterMs()));
            args.add(Integer.toString(call.tenantIds().size()));
            args.addAll(call.tenantIds());
        }
        Redis.Call call = new Redis.Call(Script.ADAPT_LIMITS, List.of(keys.breaker(report.integrationKey()),
                keys.flow(report.integrationKey(), report.handlerKey())), args);
        return Pipeline.Request.of(call, reply -> {
            List<?> values = (List<?>) reply;
            List<Event> events = new ArrayList<>(values.size() / 2);
            for (int i = 0; i + 1 < values.size(); i += 2) {
                events.add(new Event((String) values.get(i), Change.of((Long) values.get(i + 1))));
            }
            return events;
        });
    }
}
