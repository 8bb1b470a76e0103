package dev.runner.config;

import dev.runner.trigger.Trigger;

/**
 * The stack's queues by what they are for. Each is named to the functions by one variable,
 * {@code RUNNER_QUEUE_<ROLE>} (template.yaml sets it from the queue's {@code Ref}); functions
 * declare the roles they send to, so their grants can be checked against the template.
 */
public enum QueueRole {
    RUNS_MANUAL, RUNS_SCHEDULE,
    ITEMS_WEBHOOK, ITEMS_MANUAL, ITEMS_QUEUE, ITEMS_SCHEDULE,
    INGEST,
    RUNS_DLQ, ITEMS_DLQ, INGEST_DLQ;

    /** Every items tier, webhook first. */
    public static QueueRole[] itemsTiers() {
        return new QueueRole[] {ITEMS_WEBHOOK, ITEMS_MANUAL, ITEMS_QUEUE, ITEMS_SCHEDULE};
    }

    /** The variable holding the queue's URL. */
    public String variable() {
        return "RUNNER_QUEUE_" + name();
    }

    /** The items tier of a trigger. */
    public static QueueRole items(Trigger trigger) {
        return switch (trigger) {
            case WEBHOOK -> ITEMS_WEBHOOK;
            case MANUAL -> ITEMS_MANUAL;
            case QUEUE -> ITEMS_QUEUE;
            case SCHEDULE -> ITEMS_SCHEDULE;
        };
    }

    /** The runs tier of a trigger: only manual and scheduled runs fetch. */
    public static QueueRole runs(Trigger trigger) {
        return switch (trigger) {
            case MANUAL -> RUNS_MANUAL;
            case SCHEDULE -> RUNS_SCHEDULE;
            case WEBHOOK, QUEUE -> throw new IllegalArgumentException("no runs queue for trigger " + trigger.wireName());
        };
    }
}
