package dev.runner.pipeline;

import dev.runner.pipeline.CallResult.Observation;
import dev.runner.pipeline.Settlement.Item;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Per-tenant attribution of a batch call that failed as a whole: the partner's answer (a 5xx, a
 * timeout, a broken connection) names no item, so it cannot tell whose items broke it. Called
 * again split by tenant, each tenant's part tells its own story: the breaker hears one outcome per
 * part, charged to its tenant's scope, and the healthy tenants' items are served in the same
 * attempt. A single-tenant call needs no split. Parts are called one after the other on the call's
 * lease (the handler's concurrency holds), while time is left; a part there is no time left for
 * keeps the whole call's failure, observed by no one. Costs a call per tenant, only when a mixed
 * batch fails whole. No I/O of its own.
 */
final class TenantSplit {

    /** A part starts only with at least this much of the call's time left. */
    static final Duration SHORTEST_PART = Duration.ofMillis(200);

    private TenantSplit() {}

    /** The call failed as a whole (every item alike, the endpoint observed down) and carried items of more than one tenant. */
    static boolean wanted(CallResult whole, List<Item> chunk) {
        return whole.observation() == Observation.DOWN && chunk.stream().map(item -> item.job().tenantId()).distinct().count() > 1;
    }

    /**
     * Each tenant's items, in the call's order, as calls of their own; {@code callPart} answers
     * null when there is no time left for a part.
     */
    static List<CallResult> callEachTenant(CallResult whole, List<Item> chunk, Function<List<Item>, CallResult> callPart) {
        Map<String, List<Item>> byTenant = new LinkedHashMap<>();
        chunk.forEach(item -> byTenant.computeIfAbsent(item.job().tenantId(), t -> new ArrayList<>()).add(item));
        List<CallResult> results = new ArrayList<>(byTenant.size());
        for (List<Item> part : byTenant.values()) {
            CallResult result = callPart.apply(part);
            if (result == null) {
                Map<java.util.UUID, dev.runner.handler.Outcome> outcomes = new LinkedHashMap<>();
                part.forEach(item -> outcomes.put(item.itemId(), whole.outcomes().get(item.itemId())));
                result = new CallResult(whole.group(), outcomes, Observation.NONE);
            }
            results.add(result);
        }
        return results;
    }
}
