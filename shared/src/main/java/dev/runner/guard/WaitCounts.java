package dev.runner.guard;

import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A tenant's deferrals by handler and reason over the last minutes (countDeferrals-1.lua, as the operator's counts), for "why is
 * it waiting?": admission's and the source's (a tenant slot ahead, the backlog horizon). Counted in
 * five-minute periods, kept for three; the count rides on a round trip the guard makes anyway. Best effort.
 */
final class WaitCounts {

    /** One period of counts. */
    static final Duration PERIOD = Duration.ofMinutes(5);
    static final Duration KEPT = PERIOD.multipliedBy(3);

    /** What a count is about: a handler of an integration, and why. */
    record Cause(String integrationKey, String handlerKey, String reason) {

        String field() {
            return integrationKey + "|" + handlerKey + "|" + reason;
        }

        static Cause of(String field) {
            String[] parts = field.split("\\|", 3);
            return parts.length == 3 ? new Cause(parts[0], parts[1], parts[2]) : null;
        }
    }

    private final Keys keys;
    private final GuardRoundTrips roundTrips;

    WaitCounts(Keys keys, GuardRoundTrips roundTrips) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.roundTrips = Objects.requireNonNull(roundTrips, "roundTrips");
    }

    /** Queues the counts of each tenant for the next round trip. */
    void count(Map<String, Map<Cause, Integer>> byTenant, long nowMs) {
        byTenant.forEach((tenant, counts) -> {
            if (!counts.isEmpty()) {
                roundTrips.giveBack(call(tenant, counts, nowMs));
            }
        });
    }

    Redis.Call call(String tenantId, Map<Cause, Integer> counts, long nowMs) {
        List<String> args = new ArrayList<>(1 + 2 * counts.size());
        args.add(Long.toString(KEPT.toMillis()));
        counts.forEach((cause, count) -> {
            args.add(cause.field());
            args.add(Integer.toString(count));
        });
        return new Redis.Call(Script.COUNT_DEFERRALS, List.of(keys.tenantWaits(tenantId, nowMs / PERIOD.toMillis())), args);
    }

    /** Adds one to a tenant's count of a cause. */
    static void add(Map<String, Map<Cause, Integer>> byTenant, String tenantId, Cause cause) {
        byTenant.computeIfAbsent(tenantId, t -> new LinkedHashMap<>()).merge(cause, 1, Integer::sum);
    }
}
