package dev.runner.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.guard.DeferReason;
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
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueDepth;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How the machine is doing: handlers (pause, breaker, limits), tenants' windows, queue depths and
 * the per-minute charts. Handlers, queues and charts are shared by every tenant: admin only.
 * Redis figures come in one pipelined round trip per request and read "unknown" (null) when Redis
 * is away; Postgres and SQS answer the rest.
 */
final class OperationsRoutes {

    /** Longest chart: a day, as long as the deferral counts live. */
    static final int MAX_MINUTES = 1440;

    private final IntegrationQueries integrationQueries;
    private final PauseStore pauseStore;
    private final PauseService pauses;
    private final ItemQueries itemQueries;
    private final Guard guard;
    private final GuardReadings readings;
    private final QueueClient queues;
    private final RunnerConfig config;
    private final Clock clock;

    OperationsRoutes(IntegrationQueries integrationQueries, PauseStore pauseStore, PauseService pauses, ItemQueries itemQueries,
                     Guard guard, GuardReadings readings, QueueClient queues, RunnerConfig config, Clock clock) {
        this.integrationQueries = integrationQueries;
        this.pauseStore = pauseStore;
        this.pauses = pauses;
        this.itemQueries = itemQueries;
        this.guard = guard;
        this.readings = readings;
        this.queues = queues;
        this.config = config;
        this.clock = clock;
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
        return ApiResponse.json(200, handlerJson(resumed.handler()).put("paused", false)
                .put("wasPaused", resumed.wasPaused()).put("resumed", resumed.unparked()));
    }

    /** GET /breakers/{integrationKey} */
    ApiResponse breaker(ApiRequest request, Caller caller) {
        return ApiResponse.json(200, guard.breaker(request.pathParameter("integrationKey")).toJson());
    }

    /** GET /tenants?limit=&after=: tenants with their windows; a tenant key gets itself only. */
    ApiResponse tenants(ApiRequest request, Caller caller) {
        int limit = Params.intInRange("limit", request.query().get("limit"), 50, 1, RunRoutes.MAX_PAGE);
        String after = Params.optionalKey("after", request.query().get("after"));
        String only = caller instanceof Caller.Tenant tenant ? tenant.tenantId() : null;
        List<IntegrationQueries.Tenant> page = integrationQueries.tenants(only, after, limit + 1);
        List<IntegrationQueries.Tenant> shown = page.subList(0, Math.min(limit, page.size()));
        Optional<Map<String, GuardReadings.TenantUsage>> usage = readings.tenants(shown.stream().map(IntegrationQueries.Tenant::tenantId).toList());
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("tenants");
        shown.forEach(tenant -> array.add(Views.tenant(tenant.tenantId(), tenant.integrationKeys(),
                usage.map(u -> u.get(tenant.tenantId())).orElse(null), config.tenantLimit().perMinute())));
        body.put("next", page.size() > limit ? shown.getLast().tenantId() : null);
        body.put("redis", usage.isPresent() ? "ok" : "unavailable");
        return ApiResponse.json(200, body);
    }

    /** GET /queues: SQS's counts for every queue (one request each, in parallel) and the items waiting per tier (one statement). */
    ApiResponse queues(ApiRequest request, Caller caller) {
        List<ListedQueue> roles = ListedQueue.all(config.queues());
        Map<String, QueueDepth> depths = queues.depths(roles.stream().map(ListedQueue::url).toList());
        Map<dev.runner.trigger.Trigger, ItemQueries.Waiting> waiting = itemQueries.waitingByTrigger();
        Instant now = clock.instant();
        ObjectNode body = Json.object();
        ArrayNode array = body.putArray("queues");
        roles.forEach(role -> array.add(Views.queue(role, depths.get(role.url()), role.holdsItems() ? waiting.get(role.trigger()) : null, now)));
        return ApiResponse.json(200, body);
    }

    /**
     * GET /metrics/items?minutes=: per whole UTC minute, oldest first, the current (partial) minute
     * last: outcomes from Postgres (one statement), deferrals by reason from Redis (one round trip).
     */
    ApiResponse itemMetrics(ApiRequest request, Caller caller) {
        int minutes = Params.intInRange("minutes", request.query().get("minutes"), 60, 1, MAX_MINUTES);
        Instant currentMinute = clock.instant().truncatedTo(ChronoUnit.MINUTES);
        Instant since = currentMinute.minus(Duration.ofMinutes(minutes - 1L));
        Map<Instant, Map<ItemQueries.Outcome, Long>> outcomes = new LinkedHashMap<>();
        for (ItemQueries.MinuteCount count : itemQueries.perMinute(since)) {
            outcomes.computeIfAbsent(count.minute(), m -> new EnumMap<>(ItemQueries.Outcome.class)).merge(count.outcome(), count.count(), Long::sum);
        }
        Optional<List<GuardReadings.MinuteDeferrals>> deferrals = readings.deferrals(minutes);
        Map<Instant, Map<DeferReason, Long>> deferralsByMinute = new LinkedHashMap<>();
        deferrals.ifPresent(list -> list.forEach(minute -> deferralsByMinute.put(minute.minute(), minute.byReason())));
        ObjectNode body = Json.object();
        body.put("stepSeconds", 60);
        ArrayNode array = body.putArray("minutes");
        List<Instant> buckets = new ArrayList<>(minutes);
        for (int m = 0; m < minutes; m++) {
            buckets.add(since.plus(Duration.ofMinutes(m)));
        }
        for (Instant minute : buckets) {
            array.add(Views.minute(minute, outcomes.getOrDefault(minute, Map.of()),
                    deferrals.isPresent() ? deferralsByMinute.getOrDefault(minute, Map.of()) : null));
        }
        body.put("redis", deferrals.isPresent() ? "ok" : "unavailable");
        return ApiResponse.json(200, body);
    }

    private static HandlerRef handlerRef(ApiRequest request) {
        return new HandlerRef(request.pathParameter("integrationKey"), request.pathParameter("handlerKey"));
    }

    private static ObjectNode handlerJson(HandlerRef handler) {
        return Json.object().put("integrationKey", handler.integrationKey()).put("handlerKey", handler.handlerKey());
    }
}
