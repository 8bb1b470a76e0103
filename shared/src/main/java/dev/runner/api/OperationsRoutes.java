package dev.runner.api;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GuardReadings;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.IntegrationQueries;
import dev.runner.item.ItemQueries;
import dev.runner.json.Json;
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
 * How the machine is doing: tenants' windows, queue depths and the per-minute charts (the handlers'
 * state is {@link HandlerRoutes}'). Queues and charts are shared by every tenant: admin only. Redis figures come in one pipelined round trip per request and read "unknown" (null) when Redis
 * is away; Postgres and SQS answer the rest.
 */
final class OperationsRoutes {

    /** Longest chart: a day, as long as the deferral counts live. */
    static final int MAX_MINUTES = 1440;

    private final IntegrationQueries integrationQueries;
    private final ItemQueries itemQueries;
    private final GuardReadings readings;
    private final QueueClient queues;
    private final RunnerConfig config;
    private final Clock clock;

    OperationsRoutes(IntegrationQueries integrationQueries, ItemQueries itemQueries, GuardReadings readings, QueueClient queues,
                     RunnerConfig config, Clock clock) {
        this.integrationQueries = integrationQueries;
        this.itemQueries = itemQueries;
        this.readings = readings;
        this.queues = queues;
        this.config = config;
        this.clock = clock;
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
}
