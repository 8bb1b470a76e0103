package dev.runner.pipeline;

import dev.runner.bulk.BulkAction;
import dev.runner.guard.Guard;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.Integrations;
import dev.runner.log.Log;
import dev.runner.pause.PauseStore;

import java.util.Optional;

/**
 * Pause per handler: Postgres' paused_handlers is the truth, Redis holds a mirror the item
 * worker's admission reads for free. A paused handler's items are parked in Postgres as they
 * arrive (no SQS traffic, no attempt used); resume sends them back to their tiers. Other handlers
 * never notice.
 */
public final class PauseService {

    private static final Log LOG = Log.of(PauseService.class);

    /** What a pause came to. */
    public sealed interface Paused {
        /** @param mirrored false when Redis did not take the flag: Postgres holds the pause, retrying is safe */
        record Recorded(HandlerRef handler, boolean mirrored) implements Paused {}

        record UnknownHandler(HandlerRef handler) implements Paused {}
    }

    /**
     * What a resume did: whether it was paused, how many parked items went back to work at once, and the bulk action
     * that sends the rest a page at a time (empty when none was parked).
     */
    public record Resumed(HandlerRef handler, boolean wasPaused, int unparked, Optional<BulkAction> action) {}

    private final Integrations integrations;
    private final PauseStore pauses;
    private final Guard guard;
    private final BulkActions bulk;

    public PauseService(Integrations integrations, PauseStore pauses, Guard guard, BulkActions bulk) {
        this.integrations = integrations;
        this.pauses = pauses;
        this.guard = guard;
        this.bulk = bulk;
    }

    public Paused pause(HandlerRef handler) {
        if (integrations.handler(handler.integrationKey(), handler.handlerKey()).isEmpty()) {
            return new Paused.UnknownHandler(handler);
        }
        pauses.pause(handler);
        boolean mirrored = mirror(handler, true);
        LOG.info("handler paused", "integrationKey", handler.integrationKey(), "handlerKey", handler.handlerKey(), "mirrored", mirrored);
        return new Paused.Recorded(handler, mirrored);
    }

    /**
     * Deletes the pause first, then unparks its items a page at a time (a bulk action): an item parked after the
     * pause is gone cannot exist (parking requires the row), so the pages find every one.
     */
    public Resumed resume(HandlerRef handler) {
        boolean wasPaused = pauses.resume(handler);
        // Redis may keep a stale flag if this fails; the worker heals it when Postgres says not paused.
        mirror(handler, false);
        BulkActions.Asked unparked = bulk.ask(new BulkAction.Target.Resume(handler), null);
        LOG.info("handler resumed", "integrationKey", handler.integrationKey(), "handlerKey", handler.handlerKey(),
                "unparked", unparked.firstPage());
        return new Resumed(handler, wasPaused, unparked.firstPage(), unparked.action());
    }

    /**
     * A tenant integration was saved enabled: its items parked while it was disabled go back to work, a page at a time
     * (those of paused handlers stay parked). Returns how many went at once.
     */
    public int tenantEnabled(String tenantId, String integrationKey) {
        BulkActions.Asked unparked = bulk.ask(new BulkAction.Target.Enable(tenantId, integrationKey), tenantId);
        if (unparked.action().isPresent()) {
            LOG.info("tenant integration enabled", "tenantId", tenantId, "integrationKey", integrationKey, "unparked", unparked.firstPage());
        }
        return unparked.firstPage();
    }

    /** False when Redis did not take it; Postgres holds the pause either way. */
    private boolean mirror(HandlerRef handler, boolean paused) {
        try {
            guard.setPaused(handler.integrationKey(), handler.handlerKey(), paused);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("pause not mirrored to Redis", "integrationKey", handler.integrationKey(), "handlerKey", handler.handlerKey(), "error", e);
            return false;
        }
    }
}
