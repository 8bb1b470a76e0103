package dev.runner.trigger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TriggerTest {

    @Test
    void prioritiesAreTheSeedsJobPriority() {
        assertEquals(1, Trigger.WEBHOOK.priority());
        assertEquals(2, Trigger.MANUAL.priority());
        assertEquals(3, Trigger.QUEUE.priority());
        assertEquals(5, Trigger.SCHEDULE.priority());
    }

    @Test
    void wireNamesRoundTripAndUnknownOnesAreRefused() {
        for (Trigger trigger : Trigger.values()) {
            assertEquals(trigger, Trigger.fromWire(trigger.wireName()));
        }
        assertThrows(IllegalArgumentException.class, () -> Trigger.fromWire("cron"));
    }
}
