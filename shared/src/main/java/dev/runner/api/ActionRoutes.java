package dev.runner.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.bulk.BulkAction;
import dev.runner.bulk.BulkActionStore;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.pipeline.BulkActions;

import java.util.List;
import java.util.UUID;

/**
 * Bulk actions (redrive, cancel, resume, enable) and their progress: one, or a page of them newest first. A tenant key
 * sees its own tenant's only; an action across tenants (a handler's resume) is the admin's.
 */
final class ActionRoutes {

    private final BulkActions bulk;

    ActionRoutes(BulkActions bulk) {
        this.bulk = bulk;
    }

    /** GET /actions/{actionId} */
    ApiResponse get(ApiRequest request, Caller caller) {
        UUID actionId = Params.uuid("actionId", request.pathParameter("actionId"));
        return bulk.find(actionId)
                .filter(action -> caller instanceof Caller.Admin || action.tenantId() != null && caller.sees(action.tenantId()))
                .map(action -> ApiResponse.json(200, Views.action(action)))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no action " + actionId));
    }

    /** GET /actions?tenantId=&limit=&before=: newest first, keyset paged. */
    ApiResponse list(ApiRequest request, Caller caller) {
        String tenantId = Params.optionalKey("tenantId", request.query().get("tenantId"));
        int limit = Params.intInRange("limit", request.query().get("limit"), 50, 1, RunRoutes.MAX_PAGE);
        Params.Before cursor = Params.before("before", request.query().get("before"));
        BulkActionStore.Position before = cursor == null ? null : new BulkActionStore.Position(cursor.at(), cursor.id());
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("actions");
        if (!caller.sees(tenantId)) {
            body.putNull("next");
            return ApiResponse.json(200, body);
        }
        List<BulkAction> page = bulk.page(caller.tenantFilter(tenantId), before, limit + 1);
        List<BulkAction> shown = page.subList(0, Math.min(limit, page.size()));
        shown.forEach(action -> array.add(Views.action(action)));
        BulkAction last = shown.isEmpty() ? null : shown.getLast();
        body.put("next", page.size() > limit ? Params.before(last.askedAt(), last.actionId()) : null);
        return ApiResponse.json(200, body);
    }

}
