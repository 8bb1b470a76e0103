package dev.runner.api;

import dev.runner.config.RunnerConfig;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.List;

/**
 * A queue of the stack by what it does, as GET /queues lists them.
 *
 * @param kind    {@code items}, {@code runs}, {@code ingest} or {@code dlq}
 * @param trigger the tier of an items or runs queue; null for the others
 */
record QueueRole(String name, String kind, Trigger trigger, String url) {

    boolean holdsItems() {
        return kind.equals("items");
    }

    /** Every queue the functions know, items tiers first in priority order, then runs, ingest and the DLQs. */
    static List<QueueRole> all(RunnerConfig.Queues queues) {
        List<QueueRole> roles = new ArrayList<>();
        for (Trigger trigger : Trigger.values()) {
            String url = queues.items().get(trigger);
            if (url != null) {
                roles.add(new QueueRole("items-" + trigger.wireName(), "items", trigger, url));
            }
        }
        for (Trigger trigger : Trigger.values()) {
            String url = queues.runs().get(trigger);
            if (url != null) {
                roles.add(new QueueRole("runs-" + trigger.wireName(), "runs", trigger, url));
            }
        }
        roles.add(new QueueRole("ingest", "ingest", null, queues.ingest()));
        roles.add(new QueueRole("items-dlq", "dlq", null, queues.itemsDlq()));
        roles.add(new QueueRole("runs-dlq", "dlq", null, queues.runsDlq()));
        roles.add(new QueueRole("ingest-dlq", "dlq", null, queues.ingestDlq()));
        return roles;
    }
}
