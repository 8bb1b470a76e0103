package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.apikey.ApiKey;
import dev.runner.apikey.ApiKeyStore;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.IntegrationStore;
import dev.runner.integration.IntegrationType;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.pipeline.PauseService;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** What an operator sets up: integration types (admin), tenant integrations (a tenant key: its own), tenant keys (admin). */
final class SetupRoutes {

    private static final Log LOG = Log.of(SetupRoutes.class);
    private static final int MAX_KEY_NAME = 200;

    private final Integrations integrations;
    private final HandlerUrlPolicy handlerUrls;
    private final PauseService pauses;
    private final ApiKeys keys;
    private final Clock clock;

    SetupRoutes(Integrations integrations, HandlerUrlPolicy handlerUrls, PauseService pauses, ApiKeys keys, Clock clock) {
        this.integrations = integrations;
        this.handlerUrls = handlerUrls;
        this.pauses = pauses;
        this.keys = keys;
        this.clock = clock;
    }

    /** PUT /types/{integrationKey} */
    ApiResponse putType(ApiRequest request, Caller caller) {
        IntegrationType type = IntegrationType.fromJson(request.pathParameter("integrationKey"), Json.parse(request.body()));
        for (var handler : type.handlers().entrySet()) {
            Optional<String> refusal = handlerUrls.check(handler.getValue().url());
            if (refusal.isPresent()) {
                return ApiResponse.error(400, "bad_request", "handlers." + handler.getKey() + ".url refused: " + refusal.get());
            }
        }
        integrations.putType(type);
        LOG.info("type saved", "integrationKey", type.integrationKey(), "handlers", type.handlers().size());
        return ApiResponse.json(200, type.toJson());
    }

    /** GET /types/{integrationKey} */
    ApiResponse getType(ApiRequest request, Caller caller) {
        return integrations.type(request.pathParameter("integrationKey"))
                .map(type -> ApiResponse.json(200, type.toJson()))
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no type " + request.pathParameter("integrationKey")));
    }

    /** PUT /tenants/{tenantId}/integrations/{integrationKey} */
    ApiResponse putTenantIntegration(ApiRequest request, Caller caller) {
        String tenantId = request.pathParameter("tenantId");
        String integrationKey = request.pathParameter("integrationKey");
        TenantIntegration integration = TenantIntegration.fromJson(tenantId, integrationKey, Json.parse(request.body()));
        if (!caller.sees(tenantId)) {
            return noTenantIntegration();
        }
        if (integration.weight() != null && !(caller instanceof Caller.Admin)) {
            // A tenant raising its own weight would take the others' share: the operator decides it.
            return ApiResponse.error(403, "forbidden", "weight is set by an operator (an admin key), not by a tenant key");
        }
        IntegrationStore.Writer writer = caller instanceof Caller.Admin ? IntegrationStore.Writer.OPERATOR : IntegrationStore.Writer.TENANT;
        return switch (integrations.putTenantIntegration(integration, clock.instant(), writer)) {
            case Integrations.Saved.Ok ok -> {
                if (ok.integration().enabled()) {
                    pauses.tenantEnabled(tenantId, integrationKey);
                }
                LOG.info("tenant integration saved", "tenantId", tenantId, "integrationKey", integrationKey,
                        "enabled", ok.integration().enabled(), "by", writer, "schedules", ok.integration().schedules().size());
                yield ApiResponse.json(200, view(ok.integration(), ok.disabledByOperator()));
            }
            case Integrations.Saved.DisabledByOperator disabled -> ApiResponse.error(409, "disabled_by_operator",
                    "the operator disabled tenant integration " + integrationKey + "; only the operator enables it again"
                            + " (save it with enabled: false to change anything else)");
            case Integrations.Saved.NotOpenToTenants closed -> ApiResponse.error(403, "forbidden",
                    "type " + integrationKey + " is not open to tenant keys; the operator subscribes tenants to it");
            case Integrations.Saved.UnknownType unknown -> caller instanceof Caller.Admin
                    ? ApiResponse.error(404, "not_found", "no type " + integrationKey + "; PUT /types/" + integrationKey + " first")
                    : ApiResponse.error(404, "not_found", "no type " + integrationKey);
            case Integrations.Saved.Invalid invalid -> ApiResponse.error(400, "bad_request", invalid.message());
        };
    }

    /** GET /tenants/{tenantId}/integrations/{integrationKey} */
    ApiResponse getTenantIntegration(ApiRequest request, Caller caller) {
        String tenantId = request.pathParameter("tenantId");
        if (!caller.sees(tenantId)) {
            return noTenantIntegration();
        }
        return integrations.stored(tenantId, request.pathParameter("integrationKey"))
                .map(found -> ApiResponse.json(200, view(found.integration(), found.disabledByOperator())))
                .orElseGet(SetupRoutes::noTenantIntegration);
    }

    /** POST /keys {tenantId, name} → 201 with the key, shown this once. */
    ApiResponse createKey(ApiRequest request, Caller caller) {
        JsonNode body = Json.requireObject(Json.parse(request.body()), "body");
        String tenantId = IntegrationType.requireKey("tenantId", Json.text(body, "tenantId"));
        String name = Json.text(body, "name").strip();
        if (name.length() > MAX_KEY_NAME) {
            throw new BadRequest("name must be at most " + MAX_KEY_NAME + " characters");
        }
        ApiKeys.Created created = keys.create(tenantId, name);
        LOG.info("tenant key created", "keyId", created.key().keyId(), "tenantId", tenantId);
        return ApiResponse.json(201, Views.createdKey(created));
    }

    /** GET /keys?tenantId=&limit=&before= : the keys of a tenant (or of all), newest first, revoked ones too; never a key itself. */
    ApiResponse listKeys(ApiRequest request, Caller caller) {
        String tenantId = Params.optionalKey("tenantId", request.query().get("tenantId"));
        int limit = Params.intInRange("limit", request.query().get("limit"), 100, 1, RunRoutes.MAX_PAGE);
        Params.Before cursor = Params.before("before", request.query().get("before"));
        ApiKeyStore.Position before = cursor == null ? null : new ApiKeyStore.Position(cursor.at(), cursor.id());
        List<ApiKey> page = keys.page(tenantId, before, limit + 1);
        List<ApiKey> shown = page.subList(0, Math.min(limit, page.size()));
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("keys");
        shown.forEach(key -> array.add(Views.key(key)));
        ApiKey last = shown.isEmpty() ? null : shown.getLast();
        body.put("next", page.size() > limit ? Params.before(last.createdAt(), last.keyId()) : null);
        return ApiResponse.json(200, body);
    }

    /** DELETE /keys/{keyId}: revoked at once (the next request with it is 401). */
    ApiResponse revokeKey(ApiRequest request, Caller caller) {
        UUID keyId = Params.uuid("keyId", request.pathParameter("keyId"));
        return keys.revoke(keyId)
                .map(key -> {
                    LOG.info("tenant key revoked", "keyId", keyId, "tenantId", key.tenantId());
                    return ApiResponse.json(200, Views.key(key));
                })
                .orElseGet(() -> ApiResponse.error(404, "not_found", "no key " + keyId));
    }

    /** The tenant integration as the API shows it (never a secret), with who disabled it. */
    private static ObjectNode view(TenantIntegration integration, boolean disabledByOperator) {
        return integration.toJson().put("disabledByOperator", disabledByOperator);
    }

    private static ApiResponse noTenantIntegration() {
        return ApiResponse.error(404, "not_found", "no such tenant integration");
    }
}
