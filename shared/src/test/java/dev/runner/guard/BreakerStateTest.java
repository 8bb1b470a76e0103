package dev.runner.guard;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The legal transitions are data; the scripts implement exactly these. No I/O. */
class BreakerStateTest {

    @Test
    void closedOnlyOpens() {
        assertTrue(BreakerState.CLOSED.canBecome(BreakerState.OPEN));
        assertFalse(BreakerState.CLOSED.canBecome(BreakerState.HALF_OPEN));
    }

    @Test
    void openOnlyGoesHalfOpen() {
        assertTrue(BreakerState.OPEN.canBecome(BreakerState.HALF_OPEN));
        assertFalse(BreakerState.OPEN.canBecome(BreakerState.CLOSED));
    }

    @Test
    void halfOpenClosesOrReopens() {
        assertTrue(BreakerState.HALF_OPEN.canBecome(BreakerState.CLOSED));
        assertTrue(BreakerState.HALF_OPEN.canBecome(BreakerState.OPEN));
    }
}
