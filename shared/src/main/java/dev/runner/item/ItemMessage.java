package dev.runner.item;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.integration.Direction;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The body of a message on an items tier (docs/data-model.md, "Queue messages"): one item in
 * {@link ItemJob}'s own shape ({@code "type": "item"}), or a pack of several items of one run,
 * tenant, handler and trigger ({@code "type": "items"}) whose shared fields are said once and whose
 * own fields (id, external id, counters) are listed in {@code items}. A reader takes either, so
 * messages of the previous version stay readable during a deploy; a pack of one is written in the
 * one-item shape, which every version reads.
 */
public final class ItemMessage {

    static final String ONE = "item";
    static final String PACKED = "items";

    private ItemMessage() {}

    /** The items a body carries, in its order. */
    public static List<ItemJob> read(JsonNode body) {
        Json.requireObject(body, "item message");
        JsonNode type = body.get("type");
        if (type == null || ONE.equals(type.asText())) {
            return List.of(ItemJob.fromJson(body));
        }
        if (!PACKED.equals(type.asText())) {
            throw new Json.InvalidJsonException("type must be item or items: " + type.asText());
        }
        JsonNode items = body.get("items");
        if (items == null || !items.isArray() || items.isEmpty()) {
            throw new Json.InvalidJsonException("items must be a non-empty array");
        }
        try {
            UUID runId = UUID.fromString(Json.text(body, "runId"));
            String tenantId = Json.text(body, "tenantId");
            String integrationKey = Json.text(body, "integrationKey");
            String handlerKey = Json.text(body, "handlerKey");
            Direction direction = Direction.fromWire(Json.text(body, "direction"));
            Trigger trigger = Trigger.fromWire(Json.text(body, "trigger"));
            List<ItemJob> jobs = new ArrayList<>(items.size());
            for (JsonNode item : items) {
                Json.requireObject(item, "an item of a pack");
                jobs.add(new ItemJob(runId, UUID.fromString(Json.text(item, "itemId")), tenantId, integrationKey, handlerKey, direction,
                        trigger, Json.text(item, "externalId"), Json.optionalInt(item, "attempt", 0), Json.optionalInt(item, "deferrals", 0),
                        Json.optionalInt(item, "handlerWaits", 0), item.path("tenantSlotAt").asLong(0)));
            }
            return jobs;
        } catch (Json.InvalidJsonException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new Json.InvalidJsonException("item pack: " + e.getMessage());
        }
    }

    /** The body for {@code jobs}, all of one {@link #sharedBy pack key}: the one-item shape for one. */
    public static String write(List<ItemJob> jobs) {
        if (jobs.size() == 1) {
            return Json.write(jobs.getFirst().toJson());
        }
        return packed(jobs.getFirst(), jobs.stream().map(ItemMessage::part).toList());
    }

    /** One item's own fields, as a pack lists them (counters left out at 0): the packer sizes messages by these. */
    public static String part(ItemJob job) {
        ObjectNode node = Json.object();
        node.put("itemId", job.itemId().toString());
        node.put("externalId", job.externalId());
        if (job.attempt() > 0) {
            node.put("attempt", job.attempt());
        }
        if (job.deferrals() > 0) {
            node.put("deferrals", job.deferrals());
        }
        if (job.handlerWaits() > 0) {
            node.put("handlerWaits", job.handlerWaits());
        }
        if (job.tenantSlotAt() > 0) {
            node.put("tenantSlotAt", job.tenantSlotAt());
        }
        return Json.write(node);
    }

    /** A pack's body: {@code head}'s shared fields, then the items' {@link #part parts}. */
    public static String packed(ItemJob head, List<String> parts) {
        String shared = Json.write(header(head));
        StringBuilder body = new StringBuilder(shared.length() + 12 + parts.size() * 80);
        body.append(shared, 0, shared.length() - 1).append(",\"items\":[");
        for (int i = 0; i < parts.size(); i++) {
            if (i > 0) {
                body.append(',');
            }
            body.append(parts.get(i));
        }
        return body.append("]}").toString();
    }

    /** What a pack's body holds besides its items' parts and their commas, in UTF-8 bytes. */
    public static int overheadBytes(ItemJob head) {
        return utf8Length(Json.write(header(head))) + 12;
    }

    /** Whether {@code a} and {@code b} may travel in one pack: one run, tenant, handler, direction and trigger. */
    public static boolean sharedBy(ItemJob a, ItemJob b) {
        return a.runId().equals(b.runId()) && a.tenantId().equals(b.tenantId()) && a.integrationKey().equals(b.integrationKey())
                && a.handlerKey().equals(b.handlerKey()) && a.direction() == b.direction() && a.trigger() == b.trigger();
    }

    /** The bytes of {@code text} in UTF-8, which is how SQS measures a message. */
    public static int utf8Length(String text) {
        int bytes = text.length();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x80) {
                bytes += c < 0x800 ? 1 : Character.isSurrogate(c) ? 1 : 2; // a surrogate pair is 4 bytes for its 2 chars
            }
        }
        return bytes;
    }

    private static ObjectNode header(ItemJob head) {
        ObjectNode node = Json.object();
        node.put("type", PACKED);
        node.put("runId", head.runId().toString());
        node.put("tenantId", head.tenantId());
        node.put("integrationKey", head.integrationKey());
        node.put("handlerKey", head.handlerKey());
        node.put("direction", head.direction().wireName());
        node.put("trigger", head.trigger().wireName());
        return node;
    }
}
