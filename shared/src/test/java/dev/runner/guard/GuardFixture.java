package dev.runner.guard;

import dev.runner.config.RunnerConfig;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisTargets;
import dev.runner.redis.TestClock;
import dev.runner.trigger.Trigger;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

/** A Guard on a unique key prefix and a hand-moved clock, with Runner's default breaker and tenant limit. */
final class GuardFixture {

    static final RunnerConfig.Breaker BREAKER = new RunnerConfig.Breaker(5, Duration.ofSeconds(30), 2);
    static final RunnerConfig.TenantLimit TENANT = new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5));
    static final Duration LEASE_TTL = Duration.ofSeconds(90);

    final Redis redis;
    final Keys keys = RedisTargets.uniqueKeys();
    final TestClock clock = TestClock.now();
    final Guard guard;

    GuardFixture(RedisTargets.Target target) {
        this(target.redis(), TENANT);
    }

    GuardFixture(Redis redis, RunnerConfig.TenantLimit tenantLimit) {
        this.redis = redis;
        this.guard = new Guard(redis, keys, BREAKER, tenantLimit, clock, LEASE_TTL);
    }

    /** Another Guard (own connection) on the same keys and clock: a second worker. */
    Guard anotherWorker(Redis connection) {
        return new Guard(connection, keys, BREAKER, TENANT, clock, LEASE_TTL);
    }

    static GroupRequest group(String integration, String handler, ConcurrencyAndRate limits, List<Candidate> items) {
        return new GroupRequest(integration, handler, limits, items);
    }

    /** The named items of one tenant at the given tier, as a producer reserves their slots. */
    static List<Candidate> named(String tenant, Trigger trigger, List<String> ids) {
        return ids.stream().map(id -> new Candidate(id, tenant, trigger.priority())).toList();
    }

    /** {@code count} items of one tenant at the given tier, ids prefix-0, prefix-1, … */
    static List<Candidate> items(String prefix, String tenant, Trigger trigger, int count) {
        return IntStream.range(0, count)
                .mapToObj(i -> new Candidate(prefix + "-" + i, tenant, trigger.priority()))
                .toList();
    }

    /**
     * {@code successes} and {@code failures} of calls whose items are not named: they count while
     * the breaker is closed, never as half-open probes. Releases the probes and urgent markers of {@code released}.
     */
    static GroupReport tally(String integration, String handler, int successes, int failures, List<String> released) {
        List<GroupReport.Call> calls = new java.util.ArrayList<>();
        for (int i = 0; i < successes; i++) {
            calls.add(new GroupReport.Call(List.of(), true));
        }
        for (int i = 0; i < failures; i++) {
            calls.add(new GroupReport.Call(List.of(), false));
        }
        return new GroupReport(integration, handler, calls, List.of(), released);
    }

    /** One call per item, all up or all down, releasing those items' probes and markers. */
    static GroupReport calls(String integration, String handler, boolean up, List<String> itemIds) {
        return new GroupReport(integration, handler,
                itemIds.stream().map(id -> new GroupReport.Call(List.of(id), up)).toList(), List.of(), itemIds);
    }

    /**
     * The report of an admission whose calls all succeeded, as the item worker makes it: its leases go
     * back, with the probes and urgent markers of its items (named only when they may hold one);
     * successes on a clean breaker are not told (they would change nothing).
     */
    static GroupReport released(GroupAdmission admission) {
        List<String> admitted = admittedIds(admission.decisions());
        List<String> named = admission.request().items().stream()
                .filter(c -> !admission.breakerClean() || c.priority() <= Guard.URGENT_PRIORITY)
                .map(Candidate::itemId).filter(admitted::contains).toList();
        List<GroupReport.Call> calls = admission.breakerClean() ? List.of()
                : admitted.stream().map(id -> new GroupReport.Call(List.of(id), true)).toList();
        return new GroupReport(admission.request().integrationKey(), admission.request().handlerKey(), calls, admission.leaseTokens(), named);
    }

    GroupAdmission admitGroup(GroupRequest group) {
        return guard.admit(List.of(group)).getFirst();
    }

    List<Admission> admitOne(GroupRequest group) {
        return guard.admit(List.of(group)).getFirst().decisions();
    }

    static long count(List<Admission> decisions, Class<? extends Admission> kind) {
        return decisions.stream().filter(kind::isInstance).count();
    }

    static List<String> admittedIds(List<Admission> decisions) {
        return decisions.stream().filter(Admission.Admitted.class::isInstance).map(Admission::itemId).toList();
    }
}
