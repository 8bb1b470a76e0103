package dev.runner.item;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;

import java.util.UUID;

/**
 * Process this item: one item of a message on an items tier, which carries one in this shape or
 * several in a pack ({@link ItemMessage}). The payload always travels by reference: the claim
 * statement, which runs anyway, returns it from Postgres, so an item costs its message a hundred
 * bytes or so whatever the payload (SQS caps a message at 256 KiB-1 MiB).
 *
 * @param attempt   attempts already used before this message was sent (carried across retries, deferrals and redrives)
 * @param deferrals times the item was deferred by admission (breaker, limits) or by its handler; never an attempt
 * @param handlerWaits times its handler asked it to wait (429 or 503 with Retry-After) and the attempt was given back:
 *                     bounded, so a handler that always asks to wait cannot keep an item from ending
 * @param tenantSlotAt the tenant-window slot its producer reserved for this delivery (epoch ms), 0 for none: the
 *                     worker admits it on that slot without asking the window again; never carried to a re-send
 */
public record ItemJob(UUID runId, UUID itemId, String tenantId, String integrationKey, String handlerKey,
                      Direction direction, Trigger trigger, String externalId, int attempt, int deferrals, int handlerWaits,
                      long tenantSlotAt) {

    public ItemJob(UUID runId, UUID itemId, String tenantId, String integrationKey, String handlerKey,
                   Direction direction, Trigger trigger, String externalId, int attempt, int deferrals, int handlerWaits) {
        this(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attempt, deferrals, handlerWaits, 0);
    }

    /** An item its handler never asked to wait. */
    public ItemJob(UUID runId, UUID itemId, String tenantId, String integrationKey, String handlerKey,
                   Direction direction, Trigger trigger, String externalId, int attempt, int deferrals) {
        this(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attempt, deferrals, 0);
    }

    public static ItemJob fromJson(JsonNode node) {
        Json.requireObject(node, "item job");
        if (node.has("type") && !"item".equals(node.path("type").asText())) {
            throw new Json.InvalidJsonException("type must be item: " + node.path("type").asText());
        }
        try {
            return new ItemJob(UUID.fromString(Json.text(node, "runId")), UUID.fromString(Json.text(node, "itemId")),
                    Json.text(node, "tenantId"), Json.text(node, "integrationKey"), Json.text(node, "handlerKey"),
                    Direction.fromWire(Json.text(node, "direction")), Trigger.fromWire(Json.text(node, "trigger")),
                    Json.text(node, "externalId"), Json.optionalInt(node, "attempt", 0), Json.optionalInt(node, "deferrals", 0),
                    Json.optionalInt(node, "handlerWaits", 0), node.path("tenantSlotAt").asLong(0));
        } catch (Json.InvalidJsonException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException("item job: " + e.getMessage());
        }
    }

    public ObjectNode toJson() {
        ObjectNode node = Json.object();
        node.put("type", "item");
        node.put("runId", runId.toString());
        node.put("itemId", itemId.toString());
        node.put("tenantId", tenantId);
        node.put("integrationKey", integrationKey);
        node.put("handlerKey", handlerKey);
        node.put("direction", direction.wireName());
        node.put("trigger", trigger.wireName());
        node.put("externalId", externalId);
        node.put("attempt", attempt);
        node.put("deferrals", deferrals);
        if (handlerWaits > 0) {
            node.put("handlerWaits", handlerWaits);
        }
        if (tenantSlotAt > 0) {
            node.put("tenantSlotAt", tenantSlotAt);
        }
        return node;
    }

    /** This delivery waits for (or is on) the tenant-window slot reserved for it at {@code atMs}. */
    public ItemJob withTenantSlot(long atMs) {
        return new ItemJob(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attempt, deferrals,
                handlerWaits, atMs);
    }

    public ItemJob deferred() {
        return new ItemJob(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attempt, deferrals + 1,
                handlerWaits);
    }

    /** Deferred because its handler asked to wait. */
    public ItemJob askedToWait() {
        return new ItemJob(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attempt, deferrals + 1,
                handlerWaits + 1);
    }

    public ItemJob withAttempt(int attemptsUsed) {
        return new ItemJob(runId, itemId, tenantId, integrationKey, handlerKey, direction, trigger, externalId, attemptsUsed, deferrals,
                handlerWaits);
    }
}
