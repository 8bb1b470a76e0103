package dev.runner.item;

import java.util.UUID;

/** Which items a list or a bulk redrive takes; each null field matches every item. */
public record ItemFilter(String tenantId, String integrationKey, String handlerKey, UUID runId) {

    public static final ItemFilter ALL = new ItemFilter(null, null, null, null);

    public boolean isEmpty() {
        return tenantId == null && integrationKey == null && handlerKey == null && runId == null;
    }
}
