package dev.runner.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.apikey.ApiKey;
import dev.runner.bulk.BulkAction;
import dev.runner.guard.BreakerSnapshot;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GuardReadings;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.queue.QueueDepth;
import dev.runner.run.Run;

import java.time.Instant;
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
        node.put("finishedAt", time(run.finishedAt()));
        return node;
    }

    static ObjectNode item(ItemQueries.ItemView item) {
        ObjectNode node = Json.object();
        node.put("itemId", item.itemId().toString());
        node.put("externalId", item.externalId());
        node.put("status", item.status().wireName());
        node.put("attempts", item.attempts());
        node.put("lastError", item.lastError());
        node.set("history", item.history());
        node.put("dlqAt", time(item.dlqAt()));
        node.put("updatedAt", item.updatedAt().toString());
        if (item.supersededBy() != null) {
            node.put("supersededBy", item.supersededBy().toString());
        }
        if (item.waitingForRecordSince() != null) {
            node.put("waitingForRecordSince", item.waitingForRecordSince().toString());
        }
        if (item.pendingSince() != null) {
            // Waiting for its handler's callback (docs/handler-contract.md, callbacks): since when.
            node.put("pendingSince", item.pendingSince().toString());
        }
        return node;
    }

    /** An item with its run and handler; with its payload when {@code withPayload} (one item, never a list). */
    static ObjectNode item(ItemQueries.ItemDetail detail, boolean withPayload) {
        ObjectNode node = item(detail.item());
        node.put("runId", detail.runId().toString());
        node.put("tenantId", detail.tenantId());
        node.put("integrationKey", detail.integrationKey());
        node.put("handlerKey", detail.handlerKey());
        if (withPayload) {
            node.set("payload", detail.payload());
        }
        return node;
    }

    /** A tenant key as listed: never the key, never its hash. */
    /** A bulk action: what it acts on, what it will do ({@code total}) and has done, and whether it is still running. */
    static ObjectNode action(BulkAction action) {
        ObjectNode node = Json.object();
        node.put("actionId", action.actionId().toString());
        node.put("kind", action.kind());
        node.put("status", action.status().wireName());
        node.put("tenantId", action.tenantId());
        node.set("target", BulkAction.targetJson(action.target()));
        node.put("total", action.total());
        node.put("done", action.done());
        node.put("askedAt", action.askedAt().toString());
        node.put("updatedAt", action.updatedAt().toString());
        node.put("finishedAt", action.finishedAt() == null ? null : action.finishedAt().toString());
        return node;
    }

    /** The action an ask started, or null when there was nothing to do. */
    static com.fasterxml.jackson.databind.JsonNode action(java.util.Optional<BulkAction> action) {
        return action.<com.fasterxml.jackson.databind.JsonNode>map(Views::action).orElse(com.fasterxml.jackson.databind.node.NullNode.getInstance());
    }

    static ObjectNode key(ApiKey key) {
        ObjectNode node = Json.object();
        node.put("keyId", key.keyId().toString());
        node.put("tenantId", key.tenantId());
        node.put("name", key.name());
        node.put("createdAt", key.createdAt().toString());
        node.put("revokedAt", time(key.revokedAt()));
        return node;
    }

    /** A key just created, with the key itself: the only time it is shown. */
    static ObjectNode createdKey(ApiKeys.Created created) {
        return key(created.key()).put("key", created.secret());
    }

    static ObjectNode session(Caller caller, java.util.List<String> can) {
        ObjectNode node = Json.object();
        switch (caller) {
            case Caller.Admin admin -> node.put("scope", "admin").putNull("tenantId");
            case Caller.Tenant tenant -> node.put("scope", "tenant").put("tenantId", tenant.tenantId());
            case Caller.Anonymous anonymous -> node.put("scope", "none").putNull("tenantId");
            case Caller.Unlisted unlisted -> node.put("scope", "none").putNull("tenantId");
        }
        ArrayNode array = node.putArray("can");
        can.forEach(array::add);
        return node;
    }

    /**
     * A handler with its pause, breaker and limits. {@code readings} null: Redis did not answer, so
     * the breaker and usage are unknown (null), not zero.
     */
    static ObjectNode handler(HandlerRef ref, HandlerSpec spec, Instant pausedAt, long parked,
                              GuardReadings.HandlerReadings readings) {
        ObjectNode node = Json.object();
        node.put("integrationKey", ref.integrationKey());
        node.put("handlerKey", ref.handlerKey());
        node.put("paused", pausedAt != null);
        node.put("pausedAt", time(pausedAt));
        node.put("parked", parked);
        BreakerSnapshot breaker = readings == null ? null : readings.breakers().get(ref.integrationKey());
        if (breaker == null) {
            node.putNull("breaker");
        } else {
            ObjectNode breakerNode = breaker.toJson();
            breakerNode.remove("integrationKey");
            node.set("breaker", breakerNode);
        }
        GuardReadings.HandlerUsage usage = readings == null ? null : readings.usage().get(ref);
        ObjectNode concurrency = node.putObject("concurrency");
        nullable(concurrency, "inUse", usage == null ? null : usage.leasesInUse());
        nullable(concurrency, "limit", limit(spec.configs().concurrency()));
        ObjectNode rate = node.putObject("rate");
        nullable(rate, "usedLastMinute", usage == null ? null : usage.admittedLastMinute());
        nullable(rate, "limitPerMinute", limit(spec.configs().ratePerMinute()));
        GuardReadings.FlowReading flow = readings == null ? null : readings.flows().get(ref);
        if (flow == null) {
            node.putNull("adaptive");
        } else {
            node.set("adaptive", adaptive(flow));
        }
        return node;
    }

    /**
     * A handler's adaptive scopes (AIMD): its own ({@code handler}, null when at its configured
     * limits) and its tenants' ({@code tenants}), and the tenants waiting for one of its leases.
     */
    static ObjectNode adaptive(GuardReadings.FlowReading flow) {
        ObjectNode node = Json.object();
        var own = flow.handlerScope();
        if (own.isPresent()) {
            node.set("handler", adaptiveScope(own.get()));
        } else {
            node.putNull("handler");
        }
        ArrayNode tenants = node.putArray("tenants");
        flow.scopes().stream().filter(scope -> scope.tenantId() != null).forEach(scope -> tenants.add(adaptiveScope(scope)));
        ArrayNode waiting = node.putArray("tenantsWaitingForALease");
        flow.waitingTenants().forEach(waiting::add);
        return node;
    }

    private static ObjectNode adaptiveScope(GuardReadings.AdaptiveScope scope) {
        ObjectNode node = Json.object();
        if (scope.tenantId() != null) {
            node.put("tenantId", scope.tenantId());
        }
        nullable(node, "concurrency", scope.concurrency());
        nullable(node, "ratePerMinute", scope.ratePerMinute());
        node.put("stoppedUntil", time(scope.stoppedUntil()));
        nullable(node, "lastRetryAfterMs", scope.lastRetryAfterMs());
        node.put("lastRetryAfterAt", time(scope.lastRetryAfterAt()));
        node.put("why", scope.reason());
        node.put("cutAt", time(scope.cutAt()));
        return node;
    }

    /** GET /tenants/{tenantId}: the tenant's window and why its items wait, per handler. */
    static ObjectNode tenantWait(dev.runner.waiting.WaitReasons.TenantWait wait) {
        ObjectNode node = Json.object();
        node.put("tenantId", wait.tenantId());
        ObjectNode window = node.putObject("window");
        window.put("limitPerMinute", wait.limitPerMinute());
        nullable(window, "usedLastMinute", wait.usedLastMinute());
        nullable(window, "reservedAhead", wait.reservedAhead());
        window.put("heldPastHorizon", wait.held());
        ArrayNode handlers = node.putArray("handlers");
        for (var handler : wait.handlers()) {
            ObjectNode h = handlers.addObject();
            h.put("integrationKey", handler.handler().integrationKey());
            h.put("handlerKey", handler.handler().handlerKey());
            ObjectNode items = h.putObject("items");
            items.put("waiting", handler.items().waiting());
            items.put("held", handler.items().held());
            items.put("parked", handler.items().parked());
            items.put("retrying", handler.items().retrying());
            items.put("processing", handler.items().processing());
            items.put("pending", handler.items().pending());
            ArrayNode reasons = h.putArray("waitingFor");
            for (var reason : handler.reasons()) {
                ObjectNode r = reasons.addObject();
                r.put("reason", reason.reason());
                r.put("now", reason.now());
                r.put("items", reason.items());
                r.put("detail", reason.detail());
            }
        }
        node.put("redis", wait.redisKnown() ? "ok" : "unavailable");
        return node;
    }

    /** A tenant with its window; {@code usage} null when Redis did not answer. */
    static ObjectNode tenant(String tenantId, java.util.List<String> integrationKeys, GuardReadings.TenantUsage usage, int limitPerMinute) {
        ObjectNode node = Json.object();
        node.put("tenantId", tenantId);
        ArrayNode integrations = node.putArray("integrations");
        integrationKeys.forEach(integrations::add);
        ObjectNode window = node.putObject("window");
        nullable(window, "usedLastMinute", usage == null ? null : usage.usedLastMinute());
        window.put("limitPerMinute", limitPerMinute);
        nullable(node, "deferred", usage == null ? null : usage.reserved());
        return node;
    }

    /**
     * A queue with SQS's approximate counts ({@code depth} null: SQS did not answer) and, for an
     * items tier, the items Postgres has waiting on it.
     */
    static ObjectNode queue(ListedQueue queue, QueueDepth depth, ItemQueries.Waiting waiting, Instant now) {
        ObjectNode node = Json.object();
        node.put("name", queue.name());
        node.put("kind", queue.kind());
        node.put("tier", queue.trigger() == null ? null : queue.trigger().wireName());
        nullable(node, "priority", queue.trigger() == null ? null : (long) queue.trigger().priority());
        nullable(node, "visible", depth == null ? null : depth.visible());
        nullable(node, "inFlight", depth == null ? null : depth.inFlight());
        nullable(node, "delayed", depth == null ? null : depth.delayed());
        if (queue.holdsItems()) {
            node.put("waitingItems", waiting == null ? 0 : waiting.items());
            nullable(node, "oldestAgeSeconds", waiting == null ? null
                    : Math.max(0, java.time.Duration.between(waiting.oldestTouchedAt(), now).toSeconds()));
        } else {
            node.putNull("waitingItems");
            node.putNull("oldestAgeSeconds");
        }
        return node;
    }

    /** One minute of the charts; {@code deferrals} null when Redis did not answer. */
    static ObjectNode minute(Instant at, Map<ItemQueries.Outcome, Long> outcomes, Map<DeferReason, Long> deferrals) {
        ObjectNode node = Json.object();
        node.put("at", at.toString());
        node.put("succeeded", outcomes.getOrDefault(ItemQueries.Outcome.SUCCEEDED, 0L));
        node.put("retried", outcomes.getOrDefault(ItemQueries.Outcome.RETRIED, 0L));
        node.put("dead", outcomes.getOrDefault(ItemQueries.Outcome.DEAD, 0L));
        if (deferrals == null) {
            node.putNull("deferred");
            node.putNull("deferredBy");
        } else {
            node.put("deferred", deferrals.values().stream().mapToLong(Long::longValue).sum());
            ObjectNode by = node.putObject("deferredBy");
            for (DeferReason reason : DeferReason.values()) {
                by.put(reason.wireName(), deferrals.getOrDefault(reason, 0L));
            }
        }
        return node;
    }

    private static Long limit(int configured) {
        return configured == 0 ? null : (long) configured;
    }

    private static void nullable(ObjectNode node, String field, Long value) {
        if (value == null) {
            node.putNull(field);
        } else {
            node.put(field, value);
        }
    }

    private static String time(Instant instant) {
        return instant == null ? null : instant.toString();
    }
}
