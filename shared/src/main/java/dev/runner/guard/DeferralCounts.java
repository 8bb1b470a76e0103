package dev.runner.guard;

import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Deferrals counted by reason on the minute they happened, for the operator's charts
 * (countDeferrals-1.lua). The count rides on the next round trip the Guard makes (a give-back),
 * so admission costs no extra round trip. Best effort: an environment that never makes another
 * round trip loses its last counts.
 */
final class DeferralCounts {

    /** How long a minute's deferral counts are kept: the charts go back a day at most. */
    static final Duration KEPT = Duration.ofHours(25);

    private final Keys keys;
    private final GuardRoundTrips roundTrips;

    DeferralCounts(Keys keys, GuardRoundTrips roundTrips) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.roundTrips = Objects.requireNonNull(roundTrips, "roundTrips");
    }

    void count(Map<DeferReason, Integer> deferrals, long nowMs) {
        if (!deferrals.isEmpty()) {
            roundTrips.giveBack(call(deferrals, nowMs));
        }
    }

    /** countDeferrals-1.lua: adds a minute's deferrals by reason to that minute's counters. */
    Redis.Call call(Map<DeferReason, Integer> deferrals, long now) {
        List<String> args = new ArrayList<>(1 + 2 * deferrals.size());
        args.add(Long.toString(KEPT.toMillis()));
        deferrals.forEach((reason, count) -> {
            args.add(reason.wireName());
            args.add(Integer.toString(count));
        });
        return new Redis.Call(Script.COUNT_DEFERRALS, List.of(keys.deferrals(now / 60_000)), args);
    }
}
