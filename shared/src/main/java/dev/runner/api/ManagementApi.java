package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.delivery.IngestProducers;
import dev.runner.guard.Guard;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.http.Router;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.IntegrationType;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.PauseService;
import dev.runner.pipeline.RedriveService;
import dev.runner.pipeline.RunService;
import dev.runner.run.Run;
import dev.runner.run.RunStore;
import dev.runner.security.Signature;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The management API (DESIGN 3.5), behind a bearer API key compared in constant time. Every
 * answer is JSON; bad input is a 4xx naming the field, never a 5xx.
 */
public final class ManagementApi {

    private static final Log LOG = Log.of(ManagementApi.class);
    private static final int MAX_PAGE = 500;

    private final String apiKey;
    private final Database db;
    private final Integrations integrations;
    private final RunService runService;
    private final RunStore runs;
    private final ItemStore items;
    private final RedriveService redrive;
    private final PauseService pauses;
    private final Guard guard;
    private final Clock clock;
    private final Router router = new Router();
    private final ConsoleAssets console = new ConsoleAssets();

    /**
     * @param apiKey bearer key of the API; null disables it (every call but /health is 401)
     * @param db     only for /health's reachability check
     */
    public ManagementApi(String apiKey, Database db, Integrations integrations, RunService runService, RunStore runs, ItemStore items,
                         RedriveService redrive, PauseService pauses, Guard guard, IngestProducers producers, Clock clock) {
        this.apiKey = apiKey;
        this.db = db;
        this.integrations = integrations;
        this.runService = runService;
        this.runs = runs;
        this.items = items;
        this.redrive = redrive;
        this.pauses = pauses;
        this.guard = guard;
        this.clock = clock;
        router.on("GET", "/health", this::health)
                .on("PUT", "/types/{integrationKey}", this::putType)
                .on("GET", "/types/{integrationKey}", this::getType)
                .on("PUT", "/tenants/{tenantId}/integrations/{integrationKey}", this::putTenantIntegration)
                .on("GET", "/tenants/{tenantId}/integrations/{integrationKey}", this::getTenantIntegration)
                .on("POST", "/runs", this::createRun)
                .on("GET", "/runs/{runId}", this::getRun)
                .on("GET", "/runs/{runId}/items", this::listItems)
                .on("POST", "/runs/{runId}/redrive", this::redrive)
                .on("POST", "/handlers/{integrationKey}/{handlerKey}/pause", this::pause)
                .on("POST", "/handlers/{integrationKey}/{handlerKey}/resume", this::resume)
                .on("GET", "/breakers/{integrationKey}", this::breaker)
                .on("GET", "/console", console::page)
                .on("GET", "/console/{asset}", console::asset);
        // Admin only (every route here is, behind the one key): a binding lets its producer act for tenants.
        var ingestProducers = new IngestProducerRoutes(producers);
        router.on("PUT", "/ingest-producers/{senderId}", ingestProducers::put)
                .on("GET", "/ingest-producers/{senderId}", ingestProducers::get)
                .on("DELETE", "/ingest-producers/{senderId}", ingestProducers::delete);
    }

    public ApiResponse handle(ApiRequest request) {
        if (!"/health".equals(request.path()) && !ConsoleAssets.serves(request.path()) && !authorized(request)) {
            return ApiResponse.error(401, "unauthorized", "missing or wrong bearer API key");
        }
        try {
            return router.route(request);
        } catch (Json.InvalidJsonException | BadRequest e) {
            return ApiResponse.error(400, "bad_request", e.getMessage());
        } catch (RunService.RunRefused e) {
            return switch (e.reason()) {
                case NO_TENANT_INTEGRATION, NO_HANDLER -> ApiResponse.error(404, "not_found", e.getMessage());
                case DISABLED -> ApiResponse.error(409, "conflict", e.getMessage());
            };
        } catch (RuntimeException e) {
            LOG.error("management call failed", "method", request.method(), "path", request.path(), "error", e);
            return ApiResponse.error(503, "unavailable", "Runner cannot answer this right now; retry later");
        }
    }

    private boolean authorized(ApiRequest request) {
        String header = request.header("authorization");
        if (apiKey == null || header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return false;
        }
        return Signature.secretsEqual(apiKey, header.substring(7).strip());
    }

    private ApiResponse health(ApiRequest request) {
        try {
            db.query("select 1", row -> row.getInt(1));
            return ApiResponse.json(200, Json.object().put("status", "ok"));
        } catch (Database.StoreException e) {
            LOG.error("health check failed", "error", e);
            return ApiResponse.json(503, Json.object().put("status", "unavailable").put("message", "postgres unreachable"));
        }
    }

    private ApiResponse putType(ApiRequest request) {
        IntegrationType type = IntegrationType.fromJson(request.pathParameter("integrationKey"), Json.parse(request.body()));
        integrations.putType(type);
        LOG.info("type saved", "integrationKey", type.integrationKey(), "handlers", type.handlers().size());
        return ApiResponse.json(200, type.toJson());
    }

    private ApiResponse getType(ApiRequest request) {
        return integrations.type(request.pathParameter("integrationKey"))
                .map(type -> ApiResponse.json(200, type.toJson()))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no type " + request.pathParameter("integrationKey")));
    }

    private ApiResponse putTenantIntegration(ApiRequest request) {
        String tenantId = request.pathParameter("tenantId");
        String integrationKey = request.pathParameter("integrationKey");
        TenantIntegration integration = TenantIntegration.fromJson(tenantId, integrationKey, Json.parse(request.body()));
        return switch (integrations.putTenantIntegration(integration, clock.instant())) {
            case Integrations.Saved.Ok ok -> {
                if (ok.integration().enabled()) {
                    pauses.tenantEnabled(tenantId, integrationKey);
                }
                LOG.info("tenant integration saved", "tenantId", tenantId, "integrationKey", integrationKey,
                        "enabled", ok.integration().enabled(), "schedules", ok.integration().schedules().size());
                yield ApiResponse.json(200, ok.integration().toJson());
            }
            case Integrations.Saved.UnknownType unknown ->
                    ApiResponse.error(404, "not_found", "no type " + integrationKey + "; PUT /types/" + integrationKey + " first");
            case Integrations.Saved.Invalid invalid -> ApiResponse.error(400, "bad_request", invalid.message());
        };
    }

    private ApiResponse getTenantIntegration(ApiRequest request) {
        return integrations.tenantIntegration(request.pathParameter("tenantId"), request.pathParameter("integrationKey"))
                .map(found -> ApiResponse.json(200, found.toJson()))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no such tenant integration"));
    }

    private ApiResponse createRun(ApiRequest request) {
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        String tenantId = IntegrationType.requireKey("tenantId", Json.text(body, "tenantId"));
        String integrationKey = IntegrationType.requireKey("integrationKey", Json.text(body, "integrationKey"));
        String handlerKey = IntegrationType.requireKey("handlerKey", Json.text(body, "handlerKey"));
        UUID runId = runService.startFetching(new RunService.Request(tenantId, integrationKey, handlerKey, Trigger.MANUAL));
        LOG.info("manual run created", "runId", runId, "tenantId", tenantId, "integrationKey", integrationKey, "handlerKey", handlerKey);
        return ApiResponse.json(202, Json.object().put("runId", runId.toString()));
    }

    private ApiResponse getRun(ApiRequest request) {
        return findRun(request)
                .map(run -> ApiResponse.json(200, Views.run(run, items.countByStatus(run.runId()))))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no run " + request.pathParameter("runId")));
    }

    private ApiResponse listItems(ApiRequest request) {
        Optional<Run> run = findRun(request);
        if (run.isEmpty()) {
            return ApiResponse.error(404, "not_found", "no run " + request.pathParameter("runId"));
        }
        String statusParam = request.query().get("status");
        ItemStatus status = null;
        if (statusParam != null) {
            status = ItemStatus.parse(statusParam).orElseThrow(() -> new BadRequest(
                    "status must be one of " + List.of(ItemStatus.values()).stream().map(ItemStatus::wireName).collect(Collectors.joining(", "))));
        }
        int limit = parseLimit(request.query().get("limit"));
        String after = request.query().get("after");
        List<ItemStore.ItemView> page = items.list(run.get().runId(), status, after == null ? null : parseUuid("after", after), limit + 1);
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("items");
        page.stream().limit(limit).forEach(item -> array.add(Views.item(item)));
        body.put("next", page.size() > limit ? page.get(limit - 1).itemId().toString() : null);
        return ApiResponse.json(200, body);
    }

    private ApiResponse redrive(ApiRequest request) {
        Optional<Run> run = findRun(request);
        if (run.isEmpty()) {
            return ApiResponse.error(404, "not_found", "no run " + request.pathParameter("runId"));
        }
        int redriven = redrive.redriveRun(run.get().runId());
        return ApiResponse.json(202, Json.object().put("runId", run.get().runId().toString()).put("redriven", redriven));
    }

    private ApiResponse pause(ApiRequest request) {
        return switch (pauses.pause(handlerRef(request))) {
            case PauseService.Paused.Recorded recorded when !recorded.mirrored() -> ApiResponse.error(503, "unavailable",
                    "the pause is recorded but Redis did not take it; retry (pausing is idempotent)");
            case PauseService.Paused.Recorded recorded -> ApiResponse.json(200, handlerJson(recorded.handler()).put("paused", true));
            case PauseService.Paused.UnknownHandler unknown -> ApiResponse.error(404, "not_found",
                    "integration " + unknown.handler().integrationKey() + " has no handler " + unknown.handler().handlerKey());
        };
    }

    private ApiResponse resume(ApiRequest request) {
        PauseService.Resumed resumed = pauses.resume(handlerRef(request));
        return ApiResponse.json(200, handlerJson(resumed.handler()).put("paused", false)
                .put("wasPaused", resumed.wasPaused()).put("resumed", resumed.unparked()));
    }

    private ApiResponse breaker(ApiRequest request) {
        return ApiResponse.json(200, guard.breaker(request.pathParameter("integrationKey")).toJson());
    }

    private static HandlerRef handlerRef(ApiRequest request) {
        return new HandlerRef(request.pathParameter("integrationKey"), request.pathParameter("handlerKey"));
    }

    private static ObjectNode handlerJson(HandlerRef handler) {
        return Json.object().put("integrationKey", handler.integrationKey()).put("handlerKey", handler.handlerKey());
    }

    private Optional<Run> findRun(ApiRequest request) {
        return runs.find(parseUuid("runId", request.pathParameter("runId")));
    }

    /** Input the caller got wrong; its message says what. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    private static UUID parseUuid(String field, String value) {
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException e) {
            throw new BadRequest(field + " must be a UUID: " + value);
        }
    }

    private static int parseLimit(String value) {
        if (value == null) {
            return 100;
        }
        try {
            int limit = Integer.parseInt(value);
            if (limit < 1 || limit > MAX_PAGE) {
                throw new BadRequest("limit must be 1.." + MAX_PAGE + ": " + value);
            }
            return limit;
        } catch (NumberFormatException e) {
            throw new BadRequest("limit must be a whole number: " + value);
        }
    }
}
