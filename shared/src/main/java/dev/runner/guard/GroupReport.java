package dev.runner.guard;

import java.util.List;
import java.util.Objects;

/**
 * What happened to a group's handler calls: one {@link Call} per call that observed the endpoint
 * (the breaker's input: each call counts once, whatever its item count; the adaptive limits'
 * input: what the partner answered), the leases the group held (released now), and the admitted
 * items whose probes and urgent markers end now, called or not.
 *
 * @param limits     the handler's configured limits (the ceiling of its adaptive scopes)
 * @param admittedAtMs when the calls were admitted: a wave of 429s cuts a scope once, not once per call
 * @param adapted    admission found adaptive state for the group (successes may raise it)
 */
public record GroupReport(String integrationKey, String handlerKey, List<Call> calls, List<String> leaseTokens,
                          List<String> admittedItemIds, ConcurrencyAndRate limits, long admittedAtMs, boolean adapted) {

    /** What a call told of its partner. */
    public enum Observed {
        /** The endpoint answered: a success, or a business answer about the items. */
        ANSWERED,
        /** It failed: a 5xx, a broken connection, an unusable answer. */
        FAILED,
        /** No answer in time. */
        TIMED_OUT,
        /** 429 with Retry-After: the partner asks for less. */
        THROTTLED;

        /** What the breaker hears: up, down, or nothing (a request to wait is neither). */
        Boolean up() {
            return switch (this) {
                case ANSWERED -> true;
                case FAILED, TIMED_OUT -> false;
                case THROTTLED -> null;
            };
        }
    }

    /**
     * One handler call. The guard tells probe calls from others by their items: while the
     * breaker is half-open only a call carrying an item admitted as a probe counts.
     *
     * @param tenantIds    the tenants of its items, whose breaker and adaptive scopes it counts on; none: it
     *                     counts as a call of several tenants (on the integration and the handler only)
     * @param retryAfterMs the partner's Retry-After when throttled, else 0
     */
    public record Call(List<String> itemIds, Observed observed, List<String> tenantIds, long retryAfterMs) {
        public Call {
            itemIds = List.copyOf(itemIds);
            tenantIds = List.copyOf(tenantIds);
            Objects.requireNonNull(observed, "observed");
        }

        /** @param up true when the endpoint answered, false when it failed */
        public Call(List<String> itemIds, boolean up, List<String> tenantIds) {
            this(itemIds, up ? Observed.ANSWERED : Observed.FAILED, tenantIds, 0);
        }

        public Call(List<String> itemIds, boolean up) {
            this(itemIds, up, List.of());
        }

        /** For the breaker: true (answered), false (failed), or null (throttled: not told). */
        public Boolean up() {
            return observed.up();
        }
    }

    public GroupReport(String integrationKey, String handlerKey, List<Call> calls, List<String> leaseTokens, List<String> admittedItemIds) {
        this(integrationKey, handlerKey, calls, leaseTokens, admittedItemIds, ConcurrencyAndRate.UNLIMITED, 0, false);
    }

    public GroupReport {
        Objects.requireNonNull(integrationKey, "integrationKey");
        Objects.requireNonNull(handlerKey, "handlerKey");
        calls = calls == null ? List.of() : List.copyOf(calls);
        leaseTokens = leaseTokens == null ? List.of() : List.copyOf(leaseTokens);
        admittedItemIds = admittedItemIds == null ? List.of() : List.copyOf(admittedItemIds);
        limits = limits == null ? ConcurrencyAndRate.UNLIMITED : limits;
    }

    /** Only leases to give back: nothing for the breaker to hear, so its state need not even be read. */
    public boolean leasesOnly() {
        return calls.isEmpty() && admittedItemIds.isEmpty() && !leaseTokens.isEmpty();
    }

    /** Nothing to tell the guard. */
    public boolean isEmpty() {
        return calls.isEmpty() && leaseTokens.isEmpty() && admittedItemIds.isEmpty();
    }

    /** Calls the breaker hears: those that answered or failed. */
    public List<Call> breakerCalls() {
        return calls.stream().filter(call -> call.up() != null).toList();
    }

    /** The adaptive scopes have something to hear: a 429 or a timeout, or successes while adapted. */
    public boolean adaptiveNews() {
        return calls.stream().anyMatch(call -> call.observed() == Observed.THROTTLED || call.observed() == Observed.TIMED_OUT)
                || (adapted && calls.stream().anyMatch(call -> call.observed() == Observed.ANSWERED));
    }
}
