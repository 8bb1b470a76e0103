package dev.runner.api;

import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.IntegrationType;
import dev.runner.waiting.WaitReasons;

/** GET /tenants/{tenantId}: a tenant's window and why its items wait, per handler. A tenant key sees its own tenant only. */
final class WaitingRoutes {

    private final WaitReasons reasons;

    WaitingRoutes(WaitReasons reasons) {
        this.reasons = reasons;
    }

    ApiResponse tenant(ApiRequest request, Caller caller) {
        String tenantId = IntegrationType.requireKey("tenantId", request.pathParameter("tenantId"));
        if (!caller.sees(tenantId)) {
            return ApiResponse.error(404, "not_found", "no tenant " + tenantId);
        }
        return ApiResponse.json(200, Views.tenantWait(reasons.of(tenantId)));
    }
}
