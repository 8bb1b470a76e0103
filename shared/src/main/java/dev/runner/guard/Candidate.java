package dev.runner.guard;

/**
 * An item asking for admission. {@code priority} is {@code Trigger.priority()}: 1 = most urgent.
 * {@code tenantSlotAt} is the tenant-window slot its producer reserved for it (epoch ms), 0 for none.
 * {@code runTag} names its run in the tenant's window ({@link #runTagOf}), so a cancel gives back the
 * run's slots; empty when unknown. {@code weight} is its tenant integration's weight: its share of
 * the handler when tenants compete.
 */
public record Candidate(String itemId, String tenantId, int priority, long tenantSlotAt, String runTag, int weight) {

    public Candidate(String itemId, String tenantId, int priority) {
        this(itemId, tenantId, priority, 0);
    }

    public Candidate(String itemId, String tenantId, int priority, long tenantSlotAt) {
        this(itemId, tenantId, priority, tenantSlotAt, "", 1);
    }

    public Candidate {
        if (itemId == null || itemId.isEmpty()) {
            throw new IllegalArgumentException("itemId is empty");
        }
        if (tenantId == null || tenantId.isEmpty()) {
            throw new IllegalArgumentException("tenantId is empty for item " + itemId);
        }
        if (priority < 1) {
            throw new IllegalArgumentException("priority < 1: " + priority);
        }
        if (weight < 1) {
            throw new IllegalArgumentException("weight < 1: " + weight);
        }
        runTag = runTag == null ? "" : runTag;
    }

    /** A run's tag in the tenant window: the first 8 hex digits of its id, enough to tell a tenant's runs apart. */
    public static String runTagOf(java.util.UUID runId) {
        return runId.toString().substring(0, 8);
    }

    /** Its entry in the tenant's window: the itemId, then @ and its run's tag. */
    String windowMember() {
        return runTag.isEmpty() ? itemId : itemId + "@" + runTag;
    }
}
