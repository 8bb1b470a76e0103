package dev.runner.guard;

/**
 * An item asking for admission. {@code priority} is {@code Trigger.priority()}: 1 = most urgent.
 * {@code tenantSlotAt} is the tenant-window slot its producer reserved for it (epoch ms), 0 for none.
 */
public record Candidate(String itemId, String tenantId, int priority, long tenantSlotAt) {

    public Candidate(String itemId, String tenantId, int priority) {
        this(itemId, tenantId, priority, 0);
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
    }
}
