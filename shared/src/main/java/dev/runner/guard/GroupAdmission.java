package dev.runner.guard;

import java.util.List;

/**
 * Decisions for one group, in the order of {@code request.items()}.
 *
 * @param failOpen     null when Redis decided; else why Redis could not and everything was
 *                     admitted (the fail-open policy): the caller enforces what only it can, such
 *                     as pauses from Postgres
 * @param breakerClean the breaker was closed with no failure counted and nothing else needs a
 *                     report: reporting successes alone would change nothing, so the caller may skip it
 * @param leaseTokens  the concurrency leases granted, one per call the caller may have in flight
 *                     (empty when the handler has no concurrency limit): the admitted items run
 *                     through that many lanes, and the report gives the tokens back
 * @param admittedAtMs when the admission was made (what a give-back of its rate entries names)
 * @param adapted      an adaptive scope of the handler or of these tenants holds state: the report
 *                     tells it the calls' successes (they raise it)
 * @param tenantLanes  tenants compete for the handler: each lease is one tenant's ({@link #tenantOfLease}),
 *                     and a tenant's items are called on its own leases only
 */
public record GroupAdmission(GroupRequest request, List<Admission> decisions, FailOpen failOpen, boolean breakerClean,
                             List<String> leaseTokens, long admittedAtMs, boolean adapted, boolean tenantLanes) {

    public GroupAdmission(GroupRequest request, List<Admission> decisions) {
        this(request, decisions, null, false, List.of(), 0, false, false);
    }

    public GroupAdmission(GroupRequest request, List<Admission> decisions, FailOpen failOpen, boolean breakerClean,
                          List<String> leaseTokens, long admittedAtMs) {
        this(request, decisions, failOpen, breakerClean, leaseTokens, admittedAtMs, false, false);
    }

    /**
     * The tenants a lease names ("admission~tenant*weight,…:lane:end", admitHandler-10.lua); with
     * {@link #tenantLanes} exactly one.
     */
    public static List<String> tenantsOfLease(String token) {
        int tilde = token.indexOf('~');
        int colon = token.indexOf(':', tilde + 1);
        if (tilde < 0 || colon < 0) {
            return List.of();
        }
        return java.util.Arrays.stream(token.substring(tilde + 1, colon).split(","))
                .filter(entry -> !entry.isEmpty()).map(entry -> entry.contains("*") ? entry.substring(0, entry.lastIndexOf('*')) : entry)
                .toList();
    }

    /** The one tenant of a lease while tenants compete; null when it names none or several. */
    public static String tenantOfLease(String token) {
        List<String> tenants = tenantsOfLease(token);
        return tenants.size() == 1 ? tenants.getFirst() : null;
    }

    public GroupAdmission {
        decisions = List.copyOf(decisions);
        leaseTokens = List.copyOf(leaseTokens);
        if (decisions.size() != request.items().size()) {
            throw new IllegalArgumentException(
                    "decisions " + decisions.size() + " != items " + request.items().size());
        }
    }

    /** Everything was admitted because Redis could not decide. */
    public boolean failedOpen() {
        return failOpen != null;
    }

    /** The distinct tenants of these items of the request, in order: whose breaker scopes a call of them counts on. */
    public List<String> tenantsOf(java.util.Collection<String> itemIds) {
        return request.items().stream().filter(item -> itemIds.contains(item.itemId()))
                .map(Candidate::tenantId).distinct().toList();
    }

    /** Calls this group may have in flight at once: its leases, or every call when the handler has no concurrency limit. */
    public int lanes(int calls) {
        return request.limits().concurrency() == 0 || failedOpen() ? calls : Math.min(calls, leaseTokens.size());
    }
}
