package dev.runner.api;

import dev.runner.apikey.ApiKeyStore;
import dev.runner.config.RunnerConfig;
import dev.runner.delivery.IngestProducers;
import dev.runner.guard.Guard;
import dev.runner.guard.GuardReadings;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.handler.SigningKeyStore;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.http.Router;
import dev.runner.integration.IntegrationQueries;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pause.PauseStore;
import dev.runner.pipeline.BulkActions;
import dev.runner.pipeline.PauseService;
import dev.runner.pipeline.RedriveService;
import dev.runner.pipeline.RunService;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunQueries;
import dev.runner.run.RunStore;
import dev.runner.store.Database;

import java.time.Clock;
import dev.runner.waiting.WaitReasons;
import dev.runner.waiting.WaitingStore;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static dev.runner.api.Access.ADMIN;
import static dev.runner.api.Access.PUBLIC;
import static dev.runner.api.Access.SCOPED;

/**
 * The management API (docs/management-api.md). The route table below is the one place that says
 * who may call what: {@link Access} per route, the capability it grants (listed by GET /session
 * for the console), and for tenant keys the per-resource scoping inside the routes. Every answer
 * is JSON; bad input is a 4xx naming the field, never a 5xx.
 */
public final class ManagementApi {

    private static final Log LOG = Log.of(ManagementApi.class);

    /**
     * What the routes reach, built by the composition root. A unit test may leave null what its
     * requests never reach.
     */
    public record Backend(Database db, Integrations integrations, IntegrationQueries integrationQueries, RunService runService,
                          RunStore runs, RunQueries runQueries, ItemQueries itemQueries, ApiKeyStore apiKeys,
                          RedriveService redrive, BulkActions bulk, PauseService pauses, PauseStore pauseStore, Guard guard,
                          GuardReadings readings, QueueClient queues, HandlerUrlPolicy handlerUrls, IngestProducers ingestProducers,
                          SigningKeyStore signingKeys, RunnerConfig config, Clock clock) {

        /** Nothing behind the routes: for what is decided before any part is reached (access, validation, the route table). */
        public static Backend none(Clock clock) {
            return new Backend(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null,
                    null, clock);
        }
    }

    /** A route as the table declares it. */
    private record Entry(String method, String template, Access access, String capability) {}

    private final Database db;
    private final ApiKeys keys;
    private final Router router = new Router();
    private final List<Entry> entries = new ArrayList<>();

    /** @param adminKey the admin bearer key; null: admin only through IAM (tenant keys still work) */
    public ManagementApi(String adminKey, Backend backend) {
        this(adminKey, true, IamPrincipals.none(), backend);
    }

    /**
     * @param bearerKeys false: only IAM principals verified by API Gateway may call (ManagementAuth iam)
     * @param principals the IAM principals allowed in, each as the admin or as one tenant; any other is refused
     */
    public ManagementApi(String adminKey, boolean bearerKeys, IamPrincipals principals, Backend backend) {
        this.db = backend.db();
        this.keys = new ApiKeys(adminKey, bearerKeys, principals, backend.apiKeys(), backend.clock());
        var setup = new SetupRoutes(backend.integrations(), backend.handlerUrls(), backend.pauses(), keys, backend.clock());
        var console = new ConsoleAssets();
        var runs = new RunRoutes(backend.runService(), backend.runs(), backend.runQueries(), backend.itemQueries(), backend.bulk());
        var items = new ItemRoutes(backend.itemQueries(), backend.redrive(), backend.bulk());
        var actions = new ActionRoutes(backend.bulk());
        var handlers = new HandlerRoutes(backend.integrationQueries(), backend.pauseStore(), backend.itemQueries(), backend.readings(),
                backend.pauses(), backend.guard());
        var operations = new OperationsRoutes(backend.integrationQueries(), backend.itemQueries(), backend.readings(), backend.queues(),
                backend.config(), backend.clock());
        var waiting = new WaitingRoutes(new WaitReasons(new WaitingStore(backend.db()), backend.readings(), backend.pauseStore(),
                backend.integrations(), backend.config() == null ? null : backend.config().tenantLimit(), backend.clock()));

        on("GET", "/health", PUBLIC, null, this::health);
        var openApi = new OpenApiDocument();
        on("GET", "/openapi.json", PUBLIC, null, (request, caller) -> openApi.answer());
        on("GET", "/session", SCOPED, null, this::session);
        // The page itself holds no data: it signs in with a key and calls the routes below.
        on("GET", "/console", PUBLIC, null, (request, caller) -> console.page(request));
        on("GET", "/console/{asset}", PUBLIC, null, (request, caller) -> console.asset(request));

        on("PUT", "/types/{integrationKey}", ADMIN, "types:write", setup::putType);
        on("GET", "/types/{integrationKey}", ADMIN, "types:read", setup::getType);
        on("PUT", "/tenants/{tenantId}/integrations/{integrationKey}", SCOPED, "integrations:write", setup::putTenantIntegration);
        on("GET", "/tenants/{tenantId}/integrations/{integrationKey}", SCOPED, "integrations:read", setup::getTenantIntegration);
        on("POST", "/keys", ADMIN, "keys:manage", setup::createKey);
        on("GET", "/keys", ADMIN, "keys:manage", setup::listKeys);
        on("DELETE", "/keys/{keyId}", ADMIN, "keys:manage", setup::revokeKey);

        on("POST", "/runs", SCOPED, "runs:create", runs::create);
        on("GET", "/runs", SCOPED, "runs:read", runs::list);
        on("GET", "/runs/{runId}", SCOPED, "runs:read", runs::get);
        on("GET", "/runs/{runId}/items", SCOPED, "runs:read", runs::items);
        on("POST", "/runs/{runId}/redrive", SCOPED, "runs:redrive", runs::redrive);
        on("POST", "/runs/{runId}/cancel", SCOPED, "runs:cancel", runs::cancel);

        on("GET", "/items", SCOPED, "items:read", items::list);
        on("GET", "/items/{itemId}", SCOPED, "items:read", items::get);
        on("POST", "/items/{itemId}/redrive", SCOPED, "items:redrive", items::redriveOne);
        on("POST", "/redrive", SCOPED, "items:redrive", items::redriveMatching);

        // Bulk actions (a run's redrive and cancel, POST /redrive, a resume) and their progress.
        on("GET", "/actions", SCOPED, "actions:read", actions::list);
        on("GET", "/actions/{actionId}", SCOPED, "actions:read", actions::get);

        on("GET", "/tenants", SCOPED, "tenants:read", operations::tenants);
        on("GET", "/tenants/{tenantId}", SCOPED, "tenants:read", waiting::tenant);
        on("GET", "/handlers", ADMIN, "handlers:read", handlers::handlers);
        on("GET", "/breakers/{integrationKey}", ADMIN, "handlers:read", handlers::breaker);
        on("POST", "/handlers/{integrationKey}/{handlerKey}/pause", ADMIN, "handlers:pause", handlers::pause);
        on("POST", "/handlers/{integrationKey}/{handlerKey}/resume", ADMIN, "handlers:pause", handlers::resume);
        // Admin only, as types are: a handler serves every tenant of its type, and its keys sign calls for all of them.
        var signingKeys = new SigningKeyRoutes(backend.integrations(), backend.signingKeys(), backend.clock());
        on("POST", "/handlers/{integrationKey}/{handlerKey}/signing-keys", ADMIN, "signing-keys:manage", signingKeys::create);
        on("GET", "/handlers/{integrationKey}/{handlerKey}/signing-keys", ADMIN, "signing-keys:manage", signingKeys::list);
        on("DELETE", "/handlers/{integrationKey}/{handlerKey}/signing-keys/{keyId}", ADMIN, "signing-keys:manage", signingKeys::retire);
        on("GET", "/queues", ADMIN, "queues:read", operations::queues);
        on("GET", "/metrics/items", ADMIN, "metrics:read", operations::itemMetrics);

        // Admin only: a binding lets its producer act for the tenants it names (docs/ingest.md).
        var producers = new IngestProducerRoutes(backend.ingestProducers());
        on("PUT", "/ingest-producers/{senderId}", ADMIN, "producers:manage", (request, caller) -> producers.put(request));
        on("GET", "/ingest-producers/{senderId}", ADMIN, "producers:manage", (request, caller) -> producers.get(request));
        on("DELETE", "/ingest-producers/{senderId}", ADMIN, "producers:manage", (request, caller) -> producers.delete(request));
    }

    public ApiResponse handle(ApiRequest request) {
        try {
            return router.route(request);
        } catch (Json.InvalidJsonException | BadRequest e) {
            return ApiResponse.error(400, "bad_request", e.getMessage());
        } catch (RunService.RunRefused e) {
            return switch (e.reason()) {
                case NO_TENANT_INTEGRATION, NO_HANDLER -> ApiResponse.error(404, "not_found", e.getMessage());
                case DISABLED -> ApiResponse.error(409, "conflict", e.getMessage());
                case IDEMPOTENCY_KEY_REUSED -> ApiResponse.error(422, "idempotency_key_reused", e.getMessage());
            };
        } catch (RuntimeException e) {
            LOG.error("management call failed", "method", request.method(), "path", request.path(), "error", e);
            return ApiResponse.error(503, "unavailable", "Runner cannot answer this right now; retry later");
        }
    }

    /** "METHOD /template access" of every route, in table order: what docs/management-api.md lists. */
    public List<String> routeTable() {
        return entries.stream().map(e -> e.method() + " " + e.template() + " " + e.access().name().toLowerCase(java.util.Locale.ROOT)).toList();
    }

    /** Registers a route behind its access check: authentication happens only on routes that need it. */
    private void on(String method, String template, Access access, String capability, Route route) {
        entries.add(new Entry(method, template, access, capability));
        router.on(method, template, request -> {
            if (access == PUBLIC) {
                return route.handle(request, new Caller.Anonymous());
            }
            Caller caller = keys.authenticate(request).orElse(null);
            if (caller == null) {
                return ApiResponse.error(401, "unauthorized", "missing or wrong bearer API key");
            }
            if (caller instanceof Caller.Unlisted) {
                return ApiResponse.error(403, "forbidden", "this IAM principal is not allowed in (ManagementIamPrincipals)");
            }
            if (access == ADMIN && !(caller instanceof Caller.Admin)) {
                return ApiResponse.error(403, "forbidden", "this route needs the admin key");
            }
            return route.handle(request, caller);
        });
    }

    /** Capabilities the caller's routes grant, for the console to show only what works. */
    private List<String> capabilities(Caller caller) {
        Set<String> can = new LinkedHashSet<>();
        for (Entry entry : entries) {
            boolean allowed = switch (entry.access()) {
                case PUBLIC -> true;
                case SCOPED -> caller instanceof Caller.Admin || caller instanceof Caller.Tenant;
                case ADMIN -> caller instanceof Caller.Admin;
            };
            if (allowed && entry.capability() != null) {
                can.add(entry.capability());
            }
        }
        return List.copyOf(can);
    }

    private ApiResponse session(ApiRequest request, Caller caller) {
        return ApiResponse.json(200, Views.session(caller, capabilities(caller)));
    }

    private ApiResponse health(ApiRequest request, Caller caller) {
        try {
            db.ping();
            return ApiResponse.json(200, Json.object().put("status", "ok"));
        } catch (Database.StoreException e) {
            LOG.error("health check failed", "error", e);
            return ApiResponse.json(503, Json.object().put("status", "unavailable").put("message", "postgres unreachable"));
        }
    }
}
