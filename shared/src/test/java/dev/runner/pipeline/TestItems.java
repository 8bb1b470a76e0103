package dev.runner.pipeline;

import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.queue.QueueMessage;
import dev.runner.trigger.Trigger;

import java.util.Map;
import java.util.UUID;

/** Received items for the worker's steps, as a batch would carry them. */
final class TestItems {

    private TestItems() {}

    static Item item(String tenantId, Trigger trigger) {
        String id = UUID.randomUUID().toString();
        QueueMessage message = new QueueMessage(id, "{}", "receipt-" + id, 1, null, Map.of());
        return new Item(message, new ItemJob(UUID.randomUUID(), UUID.randomUUID(), tenantId, "crm", "leads", Direction.INBOUND,
                trigger, "e-1", 0, 0));
    }
}
