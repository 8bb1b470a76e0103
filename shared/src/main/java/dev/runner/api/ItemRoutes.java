package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.item.ItemFilter;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.json.Json;
import dev.runner.bulk.BulkAction;
import dev.runner.pipeline.BulkActions;
import dev.runner.pipeline.RedriveService;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Items across runs: list by status (dead items above all), open one with its payload, redrive one or many. */
final class ItemRoutes {

    /** Most dead items one POST /redrive takes; the answer says how many remain for the next call. */
    static final int MAX_REDRIVE = 10_000;
    private static final int DEFAULT_REDRIVE = 1_000;

    private final ItemQueries itemQueries;
    private final RedriveService redrive;
    private final BulkActions bulk;

    ItemRoutes(ItemQueries itemQueries, RedriveService redrive, BulkActions bulk) {
        this.itemQueries = itemQueries;
        this.redrive = redrive;
        this.bulk = bulk;
    }

    /** GET /items?status=&tenantId=&integrationKey=&handlerKey=&runId=&limit=&after= */
    ApiResponse list(ApiRequest request, Caller caller) {
        Map<String, String> query = request.query();
        String statusParam = query.get("status");
        if (statusParam == null) {
            throw new BadRequest("status is missing (" + java.util.Arrays.stream(ItemStatus.values()).map(ItemStatus::wireName)
                    .collect(java.util.stream.Collectors.joining(", ")) + ")");
        }
        ItemStatus status = Params.choice("status", statusParam, ItemStatus.values(), ItemStatus::wireName);
        String tenantId = Params.optionalKey("tenantId", query.get("tenantId"));
        ItemFilter filter = new ItemFilter(caller.tenantFilter(tenantId),
                Params.optionalKey("integrationKey", query.get("integrationKey")),
                Params.optionalKey("handlerKey", query.get("handlerKey")),
                Params.optionalUuid("runId", query.get("runId")));
        int limit = Params.intInRange("limit", query.get("limit"), 50, 1, RunRoutes.MAX_PAGE);
        ItemQueries.Position after = itemPosition(query.get("after"), status);
        if (!ItemQueries.listable(status, filter)) {
            throw new BadRequest(status.wireName() + " items are listed for one tenant or run: give tenantId or runId"
                    + " (dead items are listed across tenants too)");
        }
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("items");
        if (!caller.sees(tenantId)) {
            body.putNull("next");
            return ApiResponse.json(200, body);
        }
        List<ItemQueries.ItemDetail> page = itemQueries.page(status, filter, after, limit + 1);
        List<ItemQueries.ItemDetail> shown = page.subList(0, Math.min(limit, page.size()));
        shown.forEach(item -> array.add(Views.item(item, false)));
        body.put("next", page.size() > limit ? cursor(status, shown.getLast()) : null);
        return ApiResponse.json(200, body);
    }

    /** GET /items/{itemId}: one item with its payload. */
    ApiResponse get(ApiRequest request, Caller caller) {
        return visibleItem(request, caller)
                .map(item -> ApiResponse.json(200, Views.item(item, true)))
                .orElseGet(() -> noItem(request));
    }

    /** POST /items/{itemId}/redrive: the item back to work if it is dead; a second click redrives nothing. */
    ApiResponse redriveOne(ApiRequest request, Caller caller) {
        Optional<ItemQueries.ItemDetail> item = visibleItem(request, caller);
        if (item.isEmpty()) {
            return noItem(request);
        }
        int redriven = redrive.redriveItem(item.get().item().itemId());
        return ApiResponse.json(202, Json.object().put("itemId", item.get().item().itemId().toString())
                .put("runId", item.get().runId().toString()).put("redriven", redriven));
    }

    /**
     * POST /redrive {tenantId?, integrationKey?, handlerKey?, runId?, limit?}: dead items matching every filter given, at
     * most {@code limit}, a page at a time (a bulk action); {@code remaining}: those beyond the limit.
     */
    ApiResponse redriveMatching(ApiRequest request, Caller caller) {
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        String tenantId = Params.optionalKey("tenantId", Json.optionalText(body, "tenantId"));
        ItemFilter filter = new ItemFilter(caller.tenantFilter(tenantId),
                Params.optionalKey("integrationKey", Json.optionalText(body, "integrationKey")),
                Params.optionalKey("handlerKey", Json.optionalText(body, "handlerKey")),
                Params.optionalUuid("runId", Json.optionalText(body, "runId")));
        int limit = Json.optionalInt(body, "limit", DEFAULT_REDRIVE);
        if (limit < 1 || limit > MAX_REDRIVE) {
            throw new BadRequest("limit must be 1.." + MAX_REDRIVE + ": " + limit);
        }
        if (filter.isEmpty()) {
            // Every dead item of every tenant at once is too easy to ask for by mistake.
            throw new BadRequest("give at least one of tenantId, integrationKey, handlerKey, runId");
        }
        BulkActions.Asked redriven = caller.sees(tenantId)
                ? bulk.ask(new BulkAction.Target.Redrive(filter, limit), filter.tenantId())
                : BulkActions.Asked.NOTHING;
        ObjectNode answer = Json.object().put("redriven", redriven.firstPage()).put("runs", redriven.runs().size())
                .put("remaining", redriven.beyondLimit());
        answer.set("action", Views.action(redriven.action()));
        return ApiResponse.json(202, answer);
    }

    private Optional<ItemQueries.ItemDetail> visibleItem(ApiRequest request, Caller caller) {
        UUID itemId = Params.uuid("itemId", request.pathParameter("itemId"));
        return itemQueries.find(itemId).filter(item -> caller.sees(item.tenantId()));
    }

    private static ApiResponse noItem(ApiRequest request) {
        return ApiResponse.error(404, "not_found", "no item " + request.pathParameter("itemId"));
    }

    /** A cursor names its list's status, so it cannot be replayed against another order. */
    private static String cursor(ItemStatus status, ItemQueries.ItemDetail last) {
        Instant dlqAt = last.item().dlqAt();
        return Params.cursor(status.wireName(), status == ItemStatus.DEAD && dlqAt != null ? dlqAt.toString() : "",
                last.item().itemId().toString());
    }

    /** The position an {@code after} cursor of GET /items names; null when absent. */
    static ItemQueries.Position itemPosition(String cursor, ItemStatus status) {
        if (cursor == null) {
            return null;
        }
        List<String> parts = Params.cursorParts("after", cursor, 3);
        if (!parts.get(0).equals(status.wireName())) {
            throw new BadRequest("after belongs to the list of " + parts.get(0) + " items, not " + status.wireName());
        }
        try {
            Instant dlqAt = parts.get(1).isEmpty() ? null : Instant.parse(parts.get(1));
            if ((status == ItemStatus.DEAD) != (dlqAt != null)) {
                throw new BadRequest("after is not a cursor this API gave out: " + cursor);
            }
            return new ItemQueries.Position(dlqAt, Params.uuid("after", parts.get(2)));
        } catch (DateTimeParseException | BadRequest e) {
            throw new BadRequest("after is not a cursor this API gave out: " + cursor);
        }
    }
}
