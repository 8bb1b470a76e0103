package dev.runner.trigger;

import java.util.Locale;

/**
 * What started a run, and so how urgent its items are. Lower priority value = served first
 * (docs/how-work-flows.md). SQS has no priorities, so each trigger has its own tier queue;
 * every producer (webhook, management API, scheduler, ingest, run worker fan-out) takes the
 * tier from here and nowhere else.
 */
public enum Trigger {
    /** Real time: an external system is waiting for us. */
    WEBHOOK(1),
    /** A person asked for it. */
    MANUAL(2),
    /** Consumed from the external ingest queue. */
    QUEUE(3),
    /** Periodic; tolerates latency. */
    SCHEDULE(5);

    private final int priority;

    Trigger(int priority) {
        this.priority = priority;
    }

    public int priority() {
        return priority;
    }

    /** The lower-case name used in JSON, Postgres and queue names. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Trigger fromWire(String value) {
        if (value == null) {
            throw new IllegalArgumentException("trigger is missing");
        }
        for (Trigger trigger : values()) {
            if (trigger.wireName().equals(value)) {
                return trigger;
            }
        }
        throw new IllegalArgumentException("unknown trigger: " + value + " (webhook, manual, queue, schedule)");
    }
}
