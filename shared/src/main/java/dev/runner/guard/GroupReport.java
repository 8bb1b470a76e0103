package dev.runner.guard;

import java.util.List;

/**
 * What happened to a group's handler calls: breaker outcomes (a failure here is an integration
 * failure: timeout, 5xx, connection; not a business rejection) and the admitted items whose
 * leases end now.
 */
public record GroupReport(String integrationKey, String handlerKey, int successes, int failures,
                          List<String> releasedItemIds) {

    public GroupReport {
        if (successes < 0) {
            throw new IllegalArgumentException("successes < 0: " + successes);
        }
        if (failures < 0) {
            throw new IllegalArgumentException("failures < 0: " + failures);
        }
        releasedItemIds = releasedItemIds == null ? List.of() : List.copyOf(releasedItemIds);
    }
}
