package dev.runner.callback;

import dev.runner.log.Log;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Concurrency leases kept by items waiting for their callback (configs.pending_holds_lease): a member of the handler's
 * leases set ({@code pending:itemId:untilMs}) that counts as a call in flight and expires at the wait's end. Given back
 * when the wait ends by a callback or the timeout; a cancelled item's frees itself at the wait's end. Redis away: the item waits without its lease, as the guard fails
 * open (docs/resilience.md); a lease not given back frees itself at the wait's end.
 */
public final class HeldLeases {

    private static final Log LOG = Log.of(HeldLeases.class);

    /** A lease held: the handler's, its member, and when it frees itself (0 when only given back). */
    public record Held(String integrationKey, String handlerKey, String member, long untilMs) {
        public Held(String integrationKey, String handlerKey, String member) {
            this(integrationKey, handlerKey, member, 0);
        }
    }

    private final Redis redis;
    private final Keys keys;
    private final Clock clock;

    public HeldLeases(Redis redis, Keys keys, Clock clock) {
        this.redis = redis;
        this.keys = keys;
        this.clock = clock;
    }

    /** The lease an item waiting until {@code until} holds of its handler. */
    public static Held of(String integrationKey, String handlerKey, UUID itemId, Instant until) {
        return new Held(integrationKey, handlerKey, "pending:" + itemId + ":" + until.toEpochMilli(), until.toEpochMilli());
    }

    /**
     * Holds the leases in one round trip: when a batch's items begin to wait, and again on the scheduler's tick (an
     * admission sets the leases key's time to live back to the calls' lease time, so a quiet handler's key would
     * otherwise expire with a waiting item's lease in it). False, logged, when Redis did not take them.
     */
    public boolean hold(List<Held> leases) {
        if (leases.isEmpty()) {
            return true;
        }
        try {
            long now = clock.millis();
            redis.run(leases.stream().map(held -> holdCall(keys, held.integrationKey(), held.handlerKey(), held.member(), now,
                    held.untilMs())).toList());
            return true;
        } catch (RuntimeException e) {
            LOG.warn("held leases not taken now: their items wait without them, or the next tick holds them again",
                    "leases", leases.size(), "error", e);
            return false;
        }
    }

    /** holdLease-1.lua: keeps {@code member} in the handler's leases set until {@code untilMs}. */
    public static Redis.Call holdCall(Keys keys, String integrationKey, String handlerKey, String member, long nowMs, long untilMs) {
        return new Redis.Call(Script.HOLD_LEASE, List.of(keys.leases(integrationKey, handlerKey)),
                List.of(Long.toString(nowMs), member, Long.toString(untilMs)));
    }

    /** Gives the leases back, ringing the handler's doorbell for a worker waiting on one (releaseHandler). */
    public void release(List<Held> leases) {
        if (leases.isEmpty()) {
            return;
        }
        try {
            redis.run(leases.stream().map(held -> new Redis.Call(Script.RELEASE_HANDLER, List.of(
                    keys.rate(held.integrationKey(), held.handlerKey()), keys.probes(held.integrationKey()),
                    keys.urgent(held.integrationKey(), held.handlerKey()), keys.leases(held.integrationKey(), held.handlerKey()),
                    keys.leaseWaiters(held.integrationKey(), held.handlerKey()), keys.leaseFreed(held.integrationKey(), held.handlerKey())),
                    List.of("0", "1", held.member()))).toList());
        } catch (RuntimeException e) {
            LOG.warn("held leases not given back now; each frees itself at its wait's end", "leases", leases.size(), "error", e);
        }
    }
}
