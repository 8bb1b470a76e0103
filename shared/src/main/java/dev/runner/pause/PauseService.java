package dev.runner.pause;

import dev.runner.guard.Guard;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemDispatcher;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.store.Database;

import java.util.List;

/**
 * Pause per handler: Postgres' paused_handlers is the truth, Redis holds a mirror the item
 * worker's admission reads for free. A paused handler's items are parked in Postgres as they
 * arrive (no SQS traffic, no attempt used); resume sends them back to their tiers. Other handlers
 * never notice.
 */
public final class PauseService {

    private static final Log LOG = Log.of(PauseService.class);

    private final Integrations integrations;
    private final ItemStore items;
    private final Database db;
    private final Guard guard;
    private final ItemDispatcher dispatcher;

    public PauseService(Integrations integrations, ItemStore items, Database db, Guard guard, ItemDispatcher dispatcher) {
        this.integrations = integrations;
        this.items = items;
        this.db = db;
        this.guard = guard;
        this.dispatcher = dispatcher;
    }

    public ApiResponse pause(ApiRequest request) {
        String integrationKey = request.pathParameter("integrationKey");
        String handlerKey = request.pathParameter("handlerKey");
        if (integrations.handler(integrationKey, handlerKey).isEmpty()) {
            return ApiResponse.error(404, "not_found", "integration " + integrationKey + " has no handler " + handlerKey);
        }
        db.update("insert into paused_handlers (integration_key, handler_key) values (?, ?) on conflict do nothing",
                integrationKey, handlerKey);
        if (!mirror(integrationKey, handlerKey, true)) {
            return ApiResponse.error(503, "unavailable", "the pause is recorded but Redis did not take it; retry (pausing is idempotent)");
        }
        LOG.info("handler paused", "integrationKey", integrationKey, "handlerKey", handlerKey);
        return ApiResponse.json(200, Json.object().put("integrationKey", integrationKey).put("handlerKey", handlerKey).put("paused", true));
    }

    /** Deletes the pause first, then sweeps: an item parked after the sweep cannot exist (parking requires the row). */
    public ApiResponse resume(ApiRequest request) {
        String integrationKey = request.pathParameter("integrationKey");
        String handlerKey = request.pathParameter("handlerKey");
        int deleted = db.update("delete from paused_handlers where integration_key = ? and handler_key = ?", integrationKey, handlerKey);
        // Redis may keep a stale flag if this fails; the worker heals it when Postgres says not paused.
        mirror(integrationKey, handlerKey, false);
        List<ItemJob> parked = items.unpark(integrationKey, handlerKey);
        dispatcher.dispatch(parked);
        LOG.info("handler resumed", "integrationKey", integrationKey, "handlerKey", handlerKey, "unparked", parked.size());
        return ApiResponse.json(200, Json.object().put("integrationKey", integrationKey).put("handlerKey", handlerKey)
                .put("paused", false).put("wasPaused", deleted > 0).put("resumed", parked.size()));
    }

    public ApiResponse breaker(ApiRequest request) {
        return ApiResponse.json(200, guard.breaker(request.pathParameter("integrationKey")).toJson());
    }

    /** False when Redis did not take it; Postgres holds the pause either way. */
    private boolean mirror(String integrationKey, String handlerKey, boolean paused) {
        try {
            guard.setPaused(integrationKey, handlerKey, paused);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("pause not mirrored to Redis", "integrationKey", integrationKey, "handlerKey", handlerKey, "error", e);
            return false;
        }
    }
}
