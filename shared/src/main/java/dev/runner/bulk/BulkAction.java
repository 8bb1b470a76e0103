package dev.runner.bulk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.integration.HandlerRef;
import dev.runner.item.ItemFilter;
import dev.runner.json.Json;

import java.time.Instant;
import java.util.Locale;
import java.util.UUID;

/**
 * An action over any number of items (docs/management-api.md, bulk actions), done a page at a time: asked for once,
 * answered at once with what it will do ({@code total}), finished in the background, its progress ({@code done})
 * readable until it is forgotten.
 *
 * @param tenantId the tenant whose items it acts on, whose keys may read it; null when it spans tenants
 * @param total    what it will do, counted when asked
 * @param done     what it has done so far
 * @param cursor   where its next page starts
 */
public record BulkAction(UUID actionId, Target target, String tenantId, Status status, long total, long done, Instant askedAt,
                         Cursor cursor, Instant updatedAt, Instant finishedAt) {

    public enum Status {
        RUNNING, DONE;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What an action acts on; its kind is its type. */
    public sealed interface Target {
        /** Dead items matching {@code filter}, dead when it was asked, at most {@code limit}, oldest dead first, back to work. */
        record Redrive(ItemFilter filter, long limit) implements Target {}

        /** The items of a cancelled run not yet called (queued, retrying, parked) ended cancelled. */
        record Cancel(UUID runId) implements Target {}

        /** A resumed handler's parked items back to work (those of disabled tenant integrations stay parked). */
        record Resume(HandlerRef handler) implements Target {}

        /** An enabled tenant integration's parked items back to work (those of paused handlers stay parked). */
        record Enable(String tenantId, String integrationKey) implements Target {}
    }

    /** Where a page starts: after {@code itemId} (and its {@code at}, a redrive's dlq_at) in {@code status} (a cancel's). */
    public record Cursor(UUID itemId, Instant at, String status) {
        public static final Cursor START = new Cursor(null, null, null);
    }

    public String kind() {
        return kind(target);
    }

    static String kind(Target target) {
        return switch (target) {
            case Target.Redrive r -> "redrive";
            case Target.Cancel c -> "cancel";
            case Target.Resume r -> "resume";
            case Target.Enable e -> "enable";
        };
    }

    /** The target as stored and shown: only the fields it names. */
    public static ObjectNode targetJson(Target target) {
        ObjectNode node = Json.object();
        switch (target) {
            case Target.Redrive r -> {
                putIfSet(node, "tenantId", r.filter().tenantId());
                putIfSet(node, "integrationKey", r.filter().integrationKey());
                putIfSet(node, "handlerKey", r.filter().handlerKey());
                putIfSet(node, "runId", r.filter().runId() == null ? null : r.filter().runId().toString());
                if (r.limit() != Long.MAX_VALUE) {
                    node.put("limit", r.limit());
                }
            }
            case Target.Cancel c -> node.put("runId", c.runId().toString());
            case Target.Resume r -> node.put("integrationKey", r.handler().integrationKey()).put("handlerKey", r.handler().handlerKey());
            case Target.Enable e -> node.put("tenantId", e.tenantId()).put("integrationKey", e.integrationKey());
        }
        return node;
    }

    static Target target(String kind, JsonNode node) {
        return switch (kind) {
            case "redrive" -> {
                String runId = Json.optionalText(node, "runId");
                yield new Target.Redrive(new ItemFilter(Json.optionalText(node, "tenantId"), Json.optionalText(node, "integrationKey"),
                        Json.optionalText(node, "handlerKey"), runId == null ? null : UUID.fromString(runId)),
                        node.has("limit") ? node.get("limit").asLong() : Long.MAX_VALUE);
            }
            case "cancel" -> new Target.Cancel(UUID.fromString(Json.text(node, "runId")));
            case "resume" -> new Target.Resume(new HandlerRef(Json.text(node, "integrationKey"), Json.text(node, "handlerKey")));
            case "enable" -> new Target.Enable(Json.text(node, "tenantId"), Json.text(node, "integrationKey"));
            default -> throw new IllegalStateException("a bulk action of unknown kind " + kind);
        };
    }

    /** The key of a target: one running action per key, so asking again finds the running one. */
    static String targetKey(Target target) {
        return kind(target) + ":" + Json.write(targetJson(target));
    }

    private static void putIfSet(ObjectNode node, String field, String value) {
        if (value != null) {
            node.put(field, value);
        }
    }
}
