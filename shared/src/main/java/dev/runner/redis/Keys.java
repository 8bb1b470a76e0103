package dev.runner.redis;

import java.util.Objects;

/**
 * The one place Redis keys are built. Every key carries a hash tag, so each script touches a
 * single cluster slot: the integration's keys share {@code {i:<integration>}} (breaker, handler
 * limits, pause flags, cached type), a tenant's window has {@code {t:<tenant>}}. Tests pass a
 * unique prefix per test; production uses {@code runner}.
 */
public final class Keys {

    /** Key namespace; never contains a brace, so the first '{' of every key opens its hash tag. */
    private final String prefix;

    public Keys(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isBlank() || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException("prefix must be non-blank and without braces: " + prefix);
        }
        this.prefix = prefix;
    }

    public String prefix() {
        return prefix;
    }

    /** Hash: state, failures, successes, openedAt, halfOpenAt. Absent = closed with no failures. */
    public String breaker(String integrationKey) {
        return integration(integrationKey) + ":breaker";
    }

    /** Sorted set itemId → probe expiry (ms): the probes in flight while the breaker is half-open. */
    public String probes(String integrationKey) {
        return integration(integrationKey) + ":probes";
    }

    /** The tenant scopes of the integration's breaker (one hash, on the integration's slot). */
    public String tenantScopes(String integrationKey) {
        return integration(integrationKey) + ":tenant-scopes";
    }

    /** String: present while the handler is paused. */
    public String paused(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":paused";
    }

    /** Sorted set token:expectedEndMs → lease expiry (ms): the handler's calls in flight, one lease per call slot. */
    public String leases(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":leases";
    }

    /** Sorted set itemId:admittedAt → admission time (ms): the handler's admissions of the last minute, one entry per admission. */
    public String rate(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":rate";
    }

    /** String, present while a worker waits for one of the handler's leases: the handler's concurrency limit. */
    public String leaseWaiters(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":waiters";
    }

    /** List, the doorbell a waiting worker blocks on: one ring per lease given back while one waits. */
    public String leaseFreed(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":freed";
    }

    /** Hash: the handler's adaptive scopes (AIMD) and the tenants waiting for one of its leases. */
    public String flow(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":flow";
    }

    /** Sorted set itemId → until when (ms): urgent (webhook) items of the handler waiting or running; while any are, the share kept for them holds. */
    public String urgent(String integrationKey, String handlerKey) {
        return handler(integrationKey, handlerKey) + ":urgent";
    }

    /** Sorted set itemId → slot time (ms): the tenant's sliding window, future slots included. */
    public String tenantWindow(String tenantId) {
        return prefix + ":{t:" + require(tenantId, "tenantId") + "}:window";
    }

    /** The tenant's future slots held by items of one priority, which a more urgent item may take. */
    public String tenantBacklog(String tenantId, int priority) {
        return prefix + ":{t:" + require(tenantId, "tenantId") + "}:backlog:" + priority;
    }

    /**
     * Hash "integrationKey|handlerKey|reason" → count: a tenant's deferrals in the five minutes
     * starting at {@code epochFiveMinutes} (five-minute periods since the epoch).
     */
    public String tenantWaits(String tenantId, long epochFiveMinutes) {
        return prefix + ":{t:" + require(tenantId, "tenantId") + "}:waits:" + epochFiveMinutes;
    }

    /**
     * Hash reason → count: admission deferrals in the minute starting at {@code epochMinute}
     * (minutes since the epoch). Every minute shares the tag {@code {m}}, so a page of minutes is
     * read from one node.
     */
    public String deferrals(long epochMinute) {
        return prefix + ":{m}:deferrals:" + epochMinute;
    }

    /** String: the integration type's JSON. */
    public String type(String integrationKey) {
        return integration(integrationKey) + ":type";
    }

    private String integration(String integrationKey) {
        return prefix + ":{i:" + require(integrationKey, "integrationKey") + "}";
    }

    private String handler(String integrationKey, String handlerKey) {
        return integration(integrationKey) + ":h:" + require(handlerKey, "handlerKey");
    }

    private static String require(String value, String name) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(name + " is empty");
        }
        return value;
    }
}
