package dev.runner.run;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.integration.Direction;
import dev.runner.item.ItemStatus;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;

import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/** A run as stored, with its items counted by status when asked for. */
public record Run(UUID runId, String tenantId, String integrationKey, String handlerKey, Direction direction,
                  Trigger trigger, RunStatus status, String error, Instant createdAt, Instant finishedAt) {

    public RunJob job() {
        return new RunJob(runId, tenantId, integrationKey, handlerKey, direction, trigger, null);
    }

    /** The API's view (DESIGN 3.5). */
    public ObjectNode toJson(Map<ItemStatus, Long> counts) {
        ObjectNode node = Json.object();
        node.put("runId", runId.toString());
        node.put("tenantId", tenantId);
        node.put("integrationKey", integrationKey);
        node.put("handlerKey", handlerKey);
        node.put("direction", direction.wireName());
        node.put("status", status.wireName());
        node.put("trigger", trigger.wireName());
        node.put("priority", trigger.priority());
        ObjectNode countsNode = node.putObject("counts");
        long total = counts.values().stream().mapToLong(Long::longValue).sum();
        countsNode.put("total", total);
        for (ItemStatus status : ItemStatus.values()) {
            countsNode.put(status.wireName(), counts.getOrDefault(status, 0L));
        }
        if (error != null) {
            node.put("error", error);
        }
        node.put("createdAt", createdAt.toString());
        if (finishedAt == null) {
            node.putNull("finishedAt");
        } else {
            node.put("finishedAt", finishedAt.toString());
        }
        return node;
    }
}
