package dev.runner.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;

import java.util.UUID;

/**
 * The body of a message on a runs tier: fetch this run's items. {@code cursor} is set on a
 * continuation message, when a fetch ran out of invocation time and goes on in a new one.
 */
public record RunJob(UUID runId, String tenantId, String integrationKey, String handlerKey,
                     Direction direction, Trigger trigger, String cursor) {

    public static RunJob fromJson(JsonNode node) {
        Json.requireObject(node, "run job");
        if (node.has("type") && !"run".equals(node.path("type").asText())) {
            throw new Json.InvalidJsonException("type must be run: " + node.path("type").asText());
        }
        try {
            return new RunJob(UUID.fromString(Json.text(node, "runId")),
                    Json.text(node, "tenantId"), Json.text(node, "integrationKey"), Json.text(node, "handlerKey"),
                    Direction.fromWire(Json.text(node, "direction")),
                    Trigger.fromWire(Json.text(node, "trigger")),
                    Json.optionalText(node, "cursor"));
        } catch (Json.InvalidJsonException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException("run job: " + e.getMessage());
        }
    }

    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("type", "run");
        node.put("runId", runId.toString());
        node.put("tenantId", tenantId);
        node.put("integrationKey", integrationKey);
        node.put("handlerKey", handlerKey);
        node.put("direction", direction.wireName());
        node.put("trigger", trigger.wireName());
        if (cursor != null) {
            node.put("cursor", cursor);
        }
        return node;
    }

    public RunRef ref() {
        return new RunRef(runId, tenantId, integrationKey, handlerKey, direction, trigger);
    }

    public RunJob continuingFrom(String nextCursor) {
        return new RunJob(runId, tenantId, integrationKey, handlerKey, direction, trigger, nextCursor);
    }
}
