package dev.runner.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.guard.Guard;
import dev.runner.guard.GuardReadings;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.IntegrationQueries;
import dev.runner.integration.IntegrationType;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
import dev.runner.pause.PauseStore;
import dev.runner.pipeline.PauseService;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How the handlers are doing, and the operator's hand on them: every handler with its pause,
 * breaker and limits, pausing and resuming one, an integration's breaker. A handler serves every
 * tenant of its type: admin only. Redis figures come in one pipelined round trip per request and
 * read "unknown" (null) when Redis is away.
 */
final class HandlerRoutes {

    private final IntegrationQueries integrationQueries;
    private final PauseStore pauseStore;
    private final ItemQueries itemQueries;
    private final GuardReadings readings;
    private final PauseService pauses;
    private final Guard guard;

    HandlerRoutes(IntegrationQueries integrationQueries, PauseStore pauseStore, ItemQueries itemQueries, GuardReadings readings,
                  PauseService pauses, Guard guard) {
        this.integrationQueries = integrationQueries;
        this.pauseStore = pauseStore;
        this.itemQueries = itemQueries;
        this.readings = readings;
        this.pauses = pauses;
        this.guard = guard;
    }

    /** GET /handlers: every handler of every type. Three statements and one Redis round trip. */
    ApiResponse handlers(ApiRequest request, Caller caller) {
        Map<HandlerRef, HandlerSpec> specs = new LinkedHashMap<>();
        for (IntegrationType type : integrationQueries.types()) {
            type.handlers().forEach((key, spec) -> specs.put(new HandlerRef(type.integrationKey(), key), spec));
        }
        Map<HandlerRef, Instant> paused = pauseStore.paused();
        Map<HandlerRef, Long> parked = itemQueries.parkedByHandler();
        Optional<GuardReadings.HandlerReadings> read = readings.handlers(specs.keySet());
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("handlers");
        specs.forEach((ref, spec) -> array.add(Views.handler(ref, spec, paused.get(ref), parked.getOrDefault(ref, 0L), read.orElse(null))));
        body.put("redis", read.isPresent() ? "ok" : "unavailable");
        return ApiResponse.json(200, body);
    }

    /** POST /handlers/{integrationKey}/{handlerKey}/pause */
    ApiResponse pause(ApiRequest request, Caller caller) {
        return switch (pauses.pause(handlerRef(request))) {
            case PauseService.Paused.Recorded recorded when !recorded.mirrored() -> ApiResponse.error(503, "unavailable",
                    "the pause is recorded but Redis did not take it; retry (pausing is idempotent)");
            case PauseService.Paused.Recorded recorded -> ApiResponse.json(200, handlerJson(recorded.handler()).put("paused", true));
            case PauseService.Paused.UnknownHandler unknown -> ApiResponse.error(404, "not_found",
                    "integration " + unknown.handler().integrationKey() + " has no handler " + unknown.handler().handlerKey());
        };
    }

    /** POST /handlers/{integrationKey}/{handlerKey}/resume */
    ApiResponse resume(ApiRequest request, Caller caller) {
        PauseService.Resumed resumed = pauses.resume(handlerRef(request));
        ObjectNode body = handlerJson(resumed.handler()).put("paused", false).put("wasPaused", resumed.wasPaused())
                .put("resumed", resumed.unparked());
        body.set("action", Views.action(resumed.action()));
        return ApiResponse.json(200, body);
    }

    /** GET /breakers/{integrationKey}: the breaker and its tenant scopes, and each handler's adaptive scopes. */
    ApiResponse breaker(ApiRequest request, Caller caller) {
        String integrationKey = request.pathParameter("integrationKey");
        ObjectNode body = guard.breaker(integrationKey).toJson();
        java.util.List<HandlerRef> handlers = integrationQueries.types().stream().filter(type -> type.integrationKey().equals(integrationKey))
                .flatMap(type -> type.handlers().keySet().stream().map(key -> new HandlerRef(integrationKey, key))).toList();
        Optional<GuardReadings.HandlerReadings> read = readings.handlers(handlers);
        ObjectNode adaptive = body.putObject("adaptive");
        for (HandlerRef handler : handlers) {
            GuardReadings.FlowReading flow = read.map(r -> r.flows().get(handler)).orElse(null);
            if (flow == null) {
                adaptive.putNull(handler.handlerKey());
            } else {
                adaptive.set(handler.handlerKey(), Views.adaptive(flow));
            }
        }
        return ApiResponse.json(200, body);
    }

    private static HandlerRef handlerRef(ApiRequest request) {
        return new HandlerRef(request.pathParameter("integrationKey"), request.pathParameter("handlerKey"));
    }

    private static ObjectNode handlerJson(HandlerRef handler) {
        return Json.object().put("integrationKey", handler.integrationKey()).put("handlerKey", handler.handlerKey());
    }
}
