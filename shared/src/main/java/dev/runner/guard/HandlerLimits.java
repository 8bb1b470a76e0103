package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.Script;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A handler's pause flag, concurrency leases (shared between tenants by weight) and rate, checked
 * together with its integration's breaker and its adaptive scopes in one script on the
 * integration's slot (admitHandler-10.lua), and what goes back when an admission's take is not used
 * or its calls are done (releaseHandler-6.lua); the lease doorbell a waiting worker blocks on; the
 * Redis mirror of the pause flags.
 */
final class HandlerLimits {

    private static final SecureRandom LEASE_NAMES = new SecureRandom();
    /** How long a worker waiting for a lease sleeps when it cannot wait for the lease's ring. */
    private static final Duration RING_FALLBACK = Duration.ofMillis(50);

    /** The handler script's answer for one item. */
    record Verdict(AdmitCode code, long delayMs) {}

    /**
     * The handler script's answer for one group, in the order of its items, with the leases it granted.
     *
     * @param breakerHalfOpen the breaker was half-open (an open one shows in the verdicts)
     */
    record Answer(List<Verdict> verdicts, boolean breakerClean, List<String> leaseTokens, boolean breakerHalfOpen, boolean adapted,
                  boolean tenantLanes) {

        /** Admission found the breaker open or half-open: the metrics' BreakerOpen. */
        boolean breakerNotClosed() {
            return breakerHalfOpen || verdicts.stream().anyMatch(v -> v.code() == AdmitCode.BREAKER_OPEN || v.code() == AdmitCode.BREAKER_PROBING);
        }
    }

    private final Keys keys;
    private final RunnerConfig.Breaker breaker;
    private final Duration shortestDeferral;
    private final Duration leaseTtl;
    private final GuardRoundTrips roundTrips;

    HandlerLimits(Keys keys, RunnerConfig.Breaker breaker, Duration shortestDeferral, Duration leaseTtl, GuardRoundTrips roundTrips) {
        this.keys = Objects.requireNonNull(keys, "keys");
        this.breaker = Objects.requireNonNull(breaker, "breaker");
        this.shortestDeferral = Objects.requireNonNull(shortestDeferral, "shortestDeferral");
        if (leaseTtl.toMillis() < 1) {
            throw new IllegalArgumentException("leaseTtl < 1 ms: " + leaseTtl);
        }
        this.leaseTtl = leaseTtl;
        this.roundTrips = Objects.requireNonNull(roundTrips, "roundTrips");
    }

    /**
     * admitHandler-10.lua for one group; {@code admissionName} names its leases, unique to this
     * admission (the script adds, per lease, the tenants its lane's calls carry: the fair share counts them).
     */
    Pipeline.Request<Answer> admit(GroupRequest group, long now, String admissionName) {
        String integration = group.integrationKey();
        String handler = group.handlerKey();
        List<String> args = new ArrayList<>(12 + 4 * group.items().size());
        args.add(Long.toString(now));
        args.add(Long.toString(breaker.openFor().toMillis()));
        args.add(Integer.toString(breaker.halfOpenSuccesses()));
        args.add(Integer.toString(group.limits().concurrency()));
        args.add(Integer.toString(group.limits().ratePerMinute()));
        args.add(Long.toString(leaseTtl.toMillis()));
        args.add(Long.toString(shortestDeferral.toMillis()));
        args.add(Integer.toString(Guard.URGENT_PRIORITY));
        args.add(Integer.toString(group.itemsPerCall()));
        args.add(admissionName);
        args.add(Long.toString(Math.max(1, group.expectedCall().toMillis())));
        args.add(Long.toString(group.holdFor().toMillis()));
        for (Candidate item : group.items()) {
            args.add(item.itemId());
            args.add(Integer.toString(item.priority()));
            args.add(item.tenantId());
            args.add(Integer.toString(item.weight()));
        }
        Redis.Call call = new Redis.Call(Script.ADMIT_HANDLER, List.of(
                keys.breaker(integration), keys.probes(integration), keys.paused(integration, handler),
                keys.leases(integration, handler), keys.rate(integration, handler), keys.urgent(integration, handler),
                keys.leaseWaiters(integration, handler), keys.leaseFreed(integration, handler), keys.tenantScopes(integration),
                keys.flow(integration, handler)), args);
        int items = group.items().size();
        return Pipeline.Request.of(call, reply -> answer((List<?>) reply, items));
    }

    private static Answer answer(List<?> reply, int items) {
        int granted = reply.size() < 2 * items + 5 ? -1 : ((Long) reply.get(2 * items + 4)).intValue();
        if (granted < 0 || reply.size() != 2 * items + 5 + granted) {
            throw new IllegalStateException("admitHandler answered " + reply.size() + " values for " + items + " items");
        }
        List<Verdict> verdicts = new ArrayList<>(items);
        for (int i = 0; i < items; i++) {
            verdicts.add(new Verdict(AdmitCode.of((Long) reply.get(2 * i)), (Long) reply.get(2 * i + 1)));
        }
        boolean clean = (Long) reply.get(2 * items) == 1L;
        boolean halfOpen = (Long) reply.get(2 * items + 1) == 1L;
        boolean adapted = (Long) reply.get(2 * items + 2) == 1L;
        boolean tenantLanes = (Long) reply.get(2 * items + 3) == 1L;
        List<String> tokens = new ArrayList<>(granted);
        for (int n = 1; n <= granted; n++) {
            tokens.add((String) reply.get(2 * items + 4 + n));
        }
        return new Answer(verdicts, clean, tokens, halfOpen, adapted, tenantLanes);
    }

    /**
     * releaseHandler-6.lua: gives back what the admission at {@code admittedAt} took that will not be
     * used: the items' rate entries, probes and urgent markers, and the leases of calls not to be made.
     */
    Redis.Call release(String integration, String handler, List<String> leaseTokens, List<String> itemIds, long admittedAt) {
        return release(integration, handler, leaseTokens, itemIds, Long.toString(admittedAt));
    }

    /** releaseHandler-6.lua after the calls: their leases, and the items' probes and urgent markers (their rate entries stay). */
    Redis.Call releaseCalled(String integration, String handler, List<String> leaseTokens, List<String> itemIds) {
        return release(integration, handler, leaseTokens, itemIds, "-");
    }

    private Redis.Call release(String integration, String handler, List<String> leaseTokens, List<String> itemIds, String admittedAt) {
        List<String> args = new ArrayList<>(2 + leaseTokens.size() + itemIds.size());
        args.add(admittedAt);
        args.add(Integer.toString(leaseTokens.size()));
        args.addAll(leaseTokens);
        args.addAll(itemIds);
        return new Redis.Call(Script.RELEASE_HANDLER, List.of(keys.rate(integration, handler), keys.probes(integration),
                keys.urgent(integration, handler), keys.leases(integration, handler), keys.leaseWaiters(integration, handler),
                keys.leaseFreed(integration, handler)), args);
    }

    /** Queues the give-back of items admitted but not called (see {@link Guard#giveBack}). */
    void giveBack(GroupAdmission admission, List<String> itemIds) {
        if (!itemIds.isEmpty() && !admission.failedOpen()) {
            roundTrips.giveBack(release(admission.request().integrationKey(), admission.request().handlerKey(),
                    List.of(), itemIds, admission.admittedAtMs()));
        }
    }

    /** Gives a lease back now, in a round trip of its own (see {@link Guard#releaseLease}). */
    boolean releaseLease(GroupAdmission admission, String leaseToken) {
        if (admission.failedOpen()) {
            return false;
        }
        Pipeline pipeline = new Pipeline();
        pipeline.send(release(admission.request().integrationKey(), admission.request().handlerKey(),
                List.of(leaseToken), List.of(), admission.admittedAtMs()));
        return roundTrips.run(pipeline, "lease release", "the lease goes back with the report").isEmpty();
    }

    /** Waits for a ring of the handler's lease doorbell (see {@link Guard#awaitLease}). */
    boolean awaitLease(String integrationKey, String handlerKey, Duration wait) {
        try {
            return roundTrips.redis().blockingPop(keys.leaseFreed(integrationKey, handlerKey), wait).isPresent();
        } catch (RuntimeException e) {
            roundTrips.failOpen(e, "lease wait", "asking admission again shortly instead of waiting for a lease's ring");
            LockSupport.parkNanos(Math.min(wait.toNanos(), RING_FALLBACK.toNanos()));
            return false;
        }
    }

    /** The Redis mirror of a pause flag; throws when Redis did not take it. */
    void setPaused(String integrationKey, String handlerKey, boolean paused) {
        String key = keys.paused(integrationKey, handlerKey);
        if (paused) {
            roundTrips.redis().set(key, "1");
        } else {
            roundTrips.redis().delete(key);
        }
    }

    /**
     * Names one admission's leases: unique across workers, so a report releases exactly its own.
     * From a {@link SecureRandom}, not {@code ThreadLocalRandom}: the latter's seeder, set up before
     * a SnapStart snapshot, would be shared by every environment restored from it, which would
     * then draw the same names; the JDK's default SecureRandom mixes fresh system entropy into
     * every draw (AWS lists it as safe across snapshots).
     */
    static String leasePrefix() {
        return Long.toHexString(LEASE_NAMES.nextLong()) + Long.toHexString(System.nanoTime());
    }
}
