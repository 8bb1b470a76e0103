package dev.runner.guard;

import java.time.Duration;

/**
 * A tenant-window slot reserved at the source ({@link Guard#reserveTenantSlots}).
 *
 * @param delay how long the item waits before its slot (zero = room now)
 * @param atMs  when the slot is (epoch ms); 0 when nothing was reserved (Redis away: fail-open), -1
 *              when the slot would lie beyond the horizon ({@link #HELD}); an item that carries it is
 *              admitted on it by the worker without asking the tenant's window again, while the slot
 *              is surely still in the window ({@link TenantWindow#holdsSlot})
 */
public record TenantSlot(Duration delay, long atMs) {

    /** Nothing reserved: the worker's admission counts the item. */
    public static final TenantSlot NONE = new TenantSlot(Duration.ZERO, 0);
    /** Nothing reserved because the slot would lie beyond the horizon: the producer holds the item back. */
    public static final TenantSlot HELD = new TenantSlot(Duration.ZERO, -1);

    public boolean reserved() {
        return atMs > 0;
    }

    public boolean held() {
        return atMs < 0;
    }
}
