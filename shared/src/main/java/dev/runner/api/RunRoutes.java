package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.IntegrationType;
import dev.runner.bulk.BulkAction;
import dev.runner.item.ItemFilter;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.BulkActions;
import dev.runner.pipeline.RunService;
import dev.runner.run.Run;
import dev.runner.run.RunFilter;
import dev.runner.run.RunQueries;
import dev.runner.run.RunStatus;
import dev.runner.run.RunStore;
import dev.runner.trigger.Trigger;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** Runs: start one, list them, read one with its items, redrive its dead items, cancel one. A tenant key sees its own tenant's only. */
final class RunRoutes {

    private static final Log LOG = Log.of(RunRoutes.class);
    static final int MAX_PAGE = 500;

    private final RunService runService;
    private final RunStore runs;
    private final RunQueries runQueries;
    private final ItemQueries itemQueries;
    private final BulkActions bulk;

    RunRoutes(RunService runService, RunStore runs, RunQueries runQueries, ItemQueries itemQueries, BulkActions bulk) {
        this.runService = runService;
        this.runs = runs;
        this.runQueries = runQueries;
        this.itemQueries = itemQueries;
        this.bulk = bulk;
    }

    /** The longest Idempotency-Key taken (Stripe's limit). */
    static final int MAX_IDEMPOTENCY_KEY = 255;

    /**
     * POST /runs {tenantId, integrationKey, handlerKey}: a manual run. With an Idempotency-Key header,
     * a retry of the same request within the window answers the first one's run (with
     * Idempotent-Replayed: true) and starts none; the key is the tenant's, not the caller's.
     */
    ApiResponse create(ApiRequest request, Caller caller) {
        String idempotencyKey = idempotencyKey(request.header("Idempotency-Key"));
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        String tenantId = IntegrationType.requireKey("tenantId", Json.text(body, "tenantId"));
        String integrationKey = IntegrationType.requireKey("integrationKey", Json.text(body, "integrationKey"));
        String handlerKey = IntegrationType.requireKey("handlerKey", Json.text(body, "handlerKey"));
        if (!caller.sees(tenantId)) {
            // Word for word what RunService answers for a tenant integration that does not exist.
            throw new RunService.RunRefused(RunService.RunRefused.Reason.NO_TENANT_INTEGRATION,
                    "tenant " + tenantId + " has no integration " + integrationKey);
        }
        RunService.Accepted accepted = runService.startFetching(new RunService.Request(tenantId, integrationKey, handlerKey, Trigger.MANUAL),
                idempotencyKey);
        ApiResponse response = ApiResponse.json(202, Json.object().put("runId", accepted.runId().toString()));
        if (accepted.replayed()) {
            LOG.info("manual run request replayed", "runId", accepted.runId(), "tenantId", tenantId);
            return response.withHeader("idempotent-replayed", "true");
        }
        LOG.info("manual run created", "runId", accepted.runId(), "tenantId", tenantId, "integrationKey", integrationKey, "handlerKey", handlerKey);
        return response;
    }

    /** Null when absent; 1 to 255 printable ASCII characters (a UUID v4 is the usual choice), else 400. */
    static String idempotencyKey(String header) {
        if (header == null) {
            return null;
        }
        if (header.isEmpty() || header.length() > MAX_IDEMPOTENCY_KEY || !header.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
            throw new BadRequest("Idempotency-Key must be 1 to " + MAX_IDEMPOTENCY_KEY + " printable ASCII characters (a UUID is usual)");
        }
        return header;
    }

    /** GET /runs?tenantId=&integrationKey=&handlerKey=&trigger=&status=&limit=&before=: newest first, keyset paged. */
    ApiResponse list(ApiRequest request, Caller caller) {
        Map<String, String> query = request.query();
        String tenantId = Params.optionalKey("tenantId", query.get("tenantId"));
        RunFilter filter = new RunFilter(caller.tenantFilter(tenantId),
                Params.optionalKey("integrationKey", query.get("integrationKey")),
                Params.optionalKey("handlerKey", query.get("handlerKey")),
                Params.choice("trigger", query.get("trigger"), Trigger.values(), Trigger::wireName),
                Params.choice("status", query.get("status"), RunStatus.values(), RunStatus::wireName));
        int limit = Params.intInRange("limit", query.get("limit"), 50, 1, MAX_PAGE);
        RunQueries.Position before = runPosition(query.get("before"));
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("runs");
        if (!caller.sees(tenantId)) {
            body.putNull("next");
            return ApiResponse.json(200, body);
        }
        List<Run> page = runQueries.page(filter, before, limit + 1);
        List<Run> shown = page.subList(0, Math.min(limit, page.size()));
        Map<UUID, Map<ItemStatus, Long>> counts = itemQueries.countsByRun(shown.stream().map(Run::runId).toList());
        shown.forEach(run -> array.add(Views.run(run, counts.getOrDefault(run.runId(), Map.of()))));
        Run last = shown.isEmpty() ? null : shown.getLast();
        body.put("next", page.size() > limit ? Params.before(last.createdAt(), last.runId()) : null);
        return ApiResponse.json(200, body);
    }

    /** GET /runs/{runId} */
    ApiResponse get(ApiRequest request, Caller caller) {
        return visibleRun(request, caller)
                .map(run -> ApiResponse.json(200, Views.run(run, itemQueries.countByStatus(run.runId()))))
                .orElseGet(() -> noRun(request));
    }

    /** GET /runs/{runId}/items?status=&limit=&after=: in item (creation) order. */
    ApiResponse items(ApiRequest request, Caller caller) {
        UUID runId = Params.uuid("runId", request.pathParameter("runId"));
        ItemStatus status = Params.choice("status", request.query().get("status"), ItemStatus.values(), ItemStatus::wireName);
        int limit = Params.intInRange("limit", request.query().get("limit"), 100, 1, MAX_PAGE);
        UUID after = Params.optionalUuid("after", request.query().get("after"));
        Optional<Run> run = visibleRun(runId, caller);
        if (run.isEmpty()) {
            return noRun(request);
        }
        List<ItemQueries.ItemView> page = itemQueries.list(runId, status, after, limit + 1);
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("items");
        page.stream().limit(limit).forEach(item -> array.add(Views.item(item)));
        body.put("next", page.size() > limit ? page.get(limit - 1).itemId().toString() : null);
        return ApiResponse.json(200, body);
    }

    /**
     * POST /runs/{runId}/redrive: every dead item of the run, a page at a time (a bulk action): the answer says how
     * many went back to work at once and the action that does the rest.
     */
    ApiResponse redrive(ApiRequest request, Caller caller) {
        Optional<Run> run = visibleRun(request, caller);
        if (run.isEmpty()) {
            return noRun(request);
        }
        UUID runId = run.get().runId();
        BulkActions.Asked redriven = bulk.ask(new BulkAction.Target.Redrive(new ItemFilter(null, null, null, runId), Long.MAX_VALUE),
                run.get().tenantId());
        LOG.info("run redriven", "runId", runId, "items", redriven.firstPage(), "total", redriven.action().map(BulkAction::total).orElse(0L));
        ObjectNode body = Json.object().put("runId", runId.toString()).put("redriven", redriven.firstPage());
        body.set("action", Views.action(redriven.action()));
        return ApiResponse.json(202, body);
    }

    /**
     * POST /runs/{runId}/cancel: 202 with the run, cancelled, also when it already was (a retry is
     * answered the same), and the action that ends its items not yet called a page at a time (null when
     * none was left, or the run was already cancelled); 409 when it had already ended otherwise.
     */
    ApiResponse cancel(ApiRequest request, Caller caller) {
        Optional<Run> run = visibleRun(request, caller);
        if (run.isEmpty()) {
            return noRun(request);
        }
        UUID runId = run.get().runId();
        BulkActions.Asked cancelled = bulk.ask(new BulkAction.Target.Cancel(runId), run.get().tenantId());
        Run now = runs.find(runId).orElseThrow();
        if (now.status() != RunStatus.CANCELLED) {
            return ApiResponse.error(409, "conflict", "run " + runId + " has already ended " + now.status().wireName()
                    + "; only a queued, fetching or running run can be cancelled");
        }
        LOG.info("run cancelled", "runId", runId, "tenantId", run.get().tenantId(), "items", cancelled.firstPage());
        ObjectNode body = Views.run(now, itemQueries.countByStatus(runId));
        body.set("action", Views.action(cancelled.action()));
        return ApiResponse.json(202, body);
    }

    private Optional<Run> visibleRun(ApiRequest request, Caller caller) {
        return visibleRun(Params.uuid("runId", request.pathParameter("runId")), caller);
    }

    /** The run if the caller may see it: another tenant's run is as absent as one that does not exist. */
    private Optional<Run> visibleRun(UUID runId, Caller caller) {
        return runs.find(runId).filter(run -> caller.sees(run.tenantId()));
    }

    private static ApiResponse noRun(ApiRequest request) {
        return ApiResponse.error(404, "not_found", "no run " + request.pathParameter("runId"));
    }

    /** The position a {@code before} cursor of GET /runs names; null when absent. */
    static RunQueries.Position runPosition(String cursor) {
        Params.Before before = Params.before("before", cursor);
        return before == null ? null : new RunQueries.Position(before.at(), before.id());
    }
}
