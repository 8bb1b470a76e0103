package dev.runner.api;

import dev.runner.config.RunnerConfig;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.List;

/**
 * A queue of the stack by what it does, as GET /queues lists them (what {@code config.QueueRole} names to the
 * functions, seen by an operator).
 *
 * @param kind    {@code items}, {@code runs}, {@code ingest} or {@code dlq}
 * @param trigger the tier of an items or runs queue; null for the others
 */
record ListedQueue(String name, String kind, Trigger trigger, String url) {

    boolean holdsItems() {
        return kind.equals("items");
    }

    /** Every queue the functions know, items tiers first in priority order, then runs, ingest and the DLQs. */
    static List<ListedQueue> all(RunnerConfig.Queues queues) {
        List<ListedQueue> listed = new ArrayList<>();
        for (Trigger trigger : Trigger.values()) {
            String url = queues.items().get(trigger);
            if (url != null) {
                listed.add(new ListedQueue("items-" + trigger.wireName(), "items", trigger, url));
            }
        }
        for (Trigger trigger : Trigger.values()) {
            String url = queues.runs().get(trigger);
            if (url != null) {
                listed.add(new ListedQueue("runs-" + trigger.wireName(), "runs", trigger, url));
            }
        }
        listed.add(new ListedQueue("ingest", "ingest", null, queues.ingest()));
        listed.add(new ListedQueue("items-dlq", "dlq", null, queues.itemsDlq()));
        listed.add(new ListedQueue("runs-dlq", "dlq", null, queues.runsDlq()));
        listed.add(new ListedQueue("ingest-dlq", "dlq", null, queues.ingestDlq()));
        return listed;
    }
}
