package dev.runner.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.run.Run;

import java.util.Map;

/** How the management API shows stored things (docs/management-api.md): one renderer per noun. */
final class Views {

    private Views() {}

    /** A run with its items counted by status. */
    static ObjectNode run(Run run, Map<ItemStatus, Long> counts) {
        ObjectNode node = Json.object();
        node.put("runId", run.runId().toString());
        node.put("tenantId", run.tenantId());
        node.put("integrationKey", run.integrationKey());
        node.put("handlerKey", run.handlerKey());
        node.put("direction", run.direction().wireName());
        node.put("status", run.status().wireName());
        node.put("trigger", run.trigger().wireName());
        node.put("priority", run.trigger().priority());
        ObjectNode countsNode = node.putObject("counts");
        countsNode.put("total", counts.values().stream().mapToLong(Long::longValue).sum());
        for (ItemStatus status : ItemStatus.values()) {
            countsNode.put(status.wireName(), counts.getOrDefault(status, 0L));
        }
        if (run.error() != null) {
            node.put("error", run.error());
        }
        node.put("createdAt", run.createdAt().toString());
        node.put("finishedAt", run.finishedAt() == null ? null : run.finishedAt().toString());
        return node;
    }

    static ObjectNode item(ItemStore.ItemView item) {
        ObjectNode node = Json.object();
        node.put("itemId", item.itemId().toString());
        node.put("externalId", item.externalId());
        node.put("status", item.status().wireName());
        node.put("attempts", item.attempts());
        node.put("lastError", item.lastError());
        node.set("history", item.history());
        node.put("dlqAt", item.dlqAt() == null ? null : item.dlqAt().toString());
        node.put("updatedAt", item.updatedAt().toString());
        return node;
    }
}
