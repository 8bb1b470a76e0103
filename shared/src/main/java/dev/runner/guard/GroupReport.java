package dev.runner.guard;

import java.util.List;
import java.util.Objects;

/**
 * What happened to a group's handler calls: one {@link Call} per call that observed the endpoint
 * (the breaker's input: each call counts once, whatever its item count), the leases the group
 * held (released now), and the admitted items whose probes and urgent markers end now, called or not.
 */
public record GroupReport(String integrationKey, String handlerKey, List<Call> calls, List<String> leaseTokens,
                          List<String> admittedItemIds) {

    /**
     * One handler call. The guard tells probe calls from others by their items: while the
     * breaker is half-open only a call carrying an item admitted as a probe counts.
     *
     * @param up        true when the endpoint answered (a success or a business rejection), false when
     *                  it failed (timeout, 5xx, connection): an integration failure
     * @param tenantIds the tenants of its items, whose breaker scopes it counts on; none: it counts
     *                  as a call of several tenants (on the integration only)
     */
    public record Call(List<String> itemIds, boolean up, List<String> tenantIds) {
        public Call {
            itemIds = List.copyOf(itemIds);
            tenantIds = List.copyOf(tenantIds);
        }

        public Call(List<String> itemIds, boolean up) {
            this(itemIds, up, List.of());
        }
    }

    public GroupReport {
        Objects.requireNonNull(integrationKey, "integrationKey");
        Objects.requireNonNull(handlerKey, "handlerKey");
        calls = calls == null ? List.of() : List.copyOf(calls);
        leaseTokens = leaseTokens == null ? List.of() : List.copyOf(leaseTokens);
        admittedItemIds = admittedItemIds == null ? List.of() : List.copyOf(admittedItemIds);
    }

    /** Only leases to give back: nothing for the breaker to hear, so its state need not even be read. */
    public boolean leasesOnly() {
        return calls.isEmpty() && admittedItemIds.isEmpty() && !leaseTokens.isEmpty();
    }

    /** Nothing to tell the guard. */
    public boolean isEmpty() {
        return calls.isEmpty() && leaseTokens.isEmpty() && admittedItemIds.isEmpty();
    }
}
