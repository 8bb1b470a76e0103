package dev.runner.delivery;

import dev.runner.integration.Direction;
import dev.runner.store.Database;
import dev.runner.trigger.Trigger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Deliveries that arrived recently (delivery_ids), by their identity per tenant integration, so that one sent again
 * within its window is not processed twice; and the accept that records them together with what a new one makes:
 * its run, its items and the record of the messages they are owed, in one statement
 * ({@code runner_accept_deliveries}, db/migration/V12__event_intake.sql).
 */
public final class DeliveryStore {

    /** A delivery offered: its identity, remembered for {@code kept}, and the run it makes when it is new. */
    public record Offered(String tenantId, String integrationKey, String deliveryId, Duration kept, UUID runId) {}

    /**
     * A run a new delivery makes (several deliveries may share one), with its handler's record keeping
     * (dev.runner.coalescing): {@code coalesceMs} its coalescing window (0 = none), {@code ordered} one item per
     * record at a time.
     */
    public record NewRun(UUID runId, String handlerKey, Direction direction, Trigger trigger, int coalesceMs, boolean ordered) {
        public NewRun(UUID runId, String handlerKey, Direction direction, Trigger trigger) {
            this(runId, handlerKey, direction, trigger, 0, false);
        }

        boolean keepsRecords() {
            return coalesceMs > 0 || ordered;
        }
    }

    /** An item of a delivery: {@code delivery} is its position in the offered list; externalIds are unique per run. */
    public record NewItem(UUID itemId, int delivery, String externalId, String payloadJson) {}

    /** What became of an offered delivery: new, or seen within its window; its run (the first arrival's, for a repeat; may be null). */
    public record Outcome(boolean fresh, UUID runId) {}

    /**
     * A new item of a coalescing handler: ended superseded by {@code supersededBy} (it gets no message), or, with
     * {@code supersededBy} null, the item that waits {@code waitMs} for its record's later updates.
     */
    public record Coalesced(UUID itemId, UUID supersededBy, int waitMs) {}

    /** The outcome of each offered delivery, in their order, and what coalescing made of new items (by item id). */
    public record Accepted(List<Outcome> outcomes, Map<UUID, Coalesced> coalesced) {}

    private final Database db;

    public DeliveryStore(Database db) {
        this.db = db;
    }

    /**
     * Records the offered deliveries, and for the new ones their runs (running) and items (queued), with the messages
     * those items are owed recorded under {@code owedSendId} (OutboxStore's pending_sends); deletes the owed rows of
     * {@code settledSendIds}, whose messages went out. One statement, one transaction. Returns an outcome per offered
     * delivery, in their order.
     */
    public List<Outcome> accept(List<Offered> deliveries, List<NewRun> runs, List<NewItem> items, UUID owedSendId,
                                List<UUID> settledSendIds) {
        return acceptKeepingRecords(deliveries, runs, items, owedSendId, settledSendIds).outcomes();
    }

    /**
     * {@link #accept}, and where a run's handler keeps records ({@link NewRun#coalesceMs}, {@link NewRun#ordered}) its
     * new items are marked for the record index and coalesced, in the same statement ({@code runner_accept_records},
     * db/migration/V67__records_functions.sql).
     */
    public Accepted acceptKeepingRecords(List<Offered> deliveries, List<NewRun> runs, List<NewItem> items, UUID owedSendId,
                                         List<UUID> settledSendIds) {
        int d = deliveries.size();
        String[] tenants = new String[d];
        String[] integrations = new String[d];
        String[] ids = new String[d];
        UUID[] deliveryRuns = new UUID[d];
        Double[] kept = new Double[d];
        for (int i = 0; i < d; i++) {
            Offered offered = deliveries.get(i);
            tenants[i] = offered.tenantId();
            integrations[i] = offered.integrationKey();
            ids[i] = offered.deliveryId();
            deliveryRuns[i] = offered.runId();
            kept[i] = offered.kept().toMillis() / 1000.0;
        }
        int r = runs.size();
        UUID[] runIds = new UUID[r];
        String[] handlers = new String[r];
        String[] directions = new String[r];
        String[] triggers = new String[r];
        Integer[] priorities = new Integer[r];
        Integer[] coalesceMs = new Integer[r];
        Boolean[] ordered = new Boolean[r];
        boolean keepsRecords = false;
        for (int i = 0; i < r; i++) {
            NewRun run = runs.get(i);
            runIds[i] = run.runId();
            handlers[i] = run.handlerKey();
            directions[i] = run.direction().wireName();
            triggers[i] = run.trigger().wireName();
            priorities[i] = run.trigger().priority();
            coalesceMs[i] = run.coalesceMs();
            ordered[i] = run.ordered();
            keepsRecords |= run.keepsRecords();
        }
        int n = items.size();
        UUID[] itemIds = new UUID[n];
        Integer[] itemDeliveries = new Integer[n];
        String[] externalIds = new String[n];
        String[] payloads = new String[n];
        for (int i = 0; i < n; i++) {
            NewItem item = items.get(i);
            itemIds[i] = item.itemId();
            itemDeliveries[i] = item.delivery() + 1;
            externalIds[i] = item.externalId();
            payloads[i] = item.payloadJson();
        }
        Outcome[] outcomes = new Outcome[d];
        Map<UUID, Coalesced> coalesced = new HashMap<>();
        Object[] parameters = {Database.array("text", tenants), Database.array("text", integrations), Database.array("text", ids),
                Database.array("uuid", deliveryRuns), Database.array("float8", kept), Database.array("uuid", runIds),
                Database.array("text", handlers), Database.array("text", directions), Database.array("text", triggers),
                Database.array("int4", priorities), Database.array("uuid", itemIds), Database.array("int4", itemDeliveries),
                Database.array("text", externalIds), Database.array("text", payloads), owedSendId,
                Database.array("uuid", settledSendIds.toArray())};
        String arguments = """
                ?::text[], ?::text[], ?::text[], ?::uuid[], ?::float8[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::int[],
                ?::uuid[], ?::int[], ?::text[], ?::text[], ?::uuid, ?::uuid[]""";
        if (!keepsRecords) {
            db.query(new Database.Sql("select delivery, fresh, run_id from runner_accept_deliveries(" + arguments + ")", parameters),
                    row -> outcomes[row.getInt(1) - 1] = new Outcome(row.getBoolean(2), row.getObject(3, UUID.class)));
        } else {
            Object[] withModes = Arrays.copyOf(parameters, parameters.length + 2);
            withModes[parameters.length] = Database.array("int4", coalesceMs);
            withModes[parameters.length + 1] = Database.array("bool", ordered);
            db.query(new Database.Sql("select delivery, fresh, run_id, item_id, superseded_by, wait_ms from runner_accept_records("
                    + arguments + ", ?::int[], ?::boolean[])", withModes), row -> {
                        UUID itemId = row.getObject(4, UUID.class);
                        if (itemId == null) {
                            outcomes[row.getInt(1) - 1] = new Outcome(row.getBoolean(2), row.getObject(3, UUID.class));
                        } else {
                            coalesced.put(itemId, new Coalesced(itemId, row.getObject(5, UUID.class), row.getInt(6)));
                        }
                        return itemId;
                    });
        }
        List<Outcome> answered = new ArrayList<>(Arrays.asList(outcomes));
        if (answered.contains(null)) {
            throw new IllegalStateException("runner_accept_deliveries answered " + answered.stream().filter(o -> o != null).count()
                    + " of " + d + " deliveries");
        }
        return new Accepted(answered, coalesced);
    }

    /**
     * Forgets deliveries past their own window (one recorded before kept_until existed: past {@code window}): one sent
     * again after it is processed again anyway. At most {@code limit} rows; returns how many.
     */
    public int purge(Duration window, int limit) {
        int kept = db.update("""
                delete from delivery_ids where ctid = any(array(
                    select ctid from delivery_ids where kept_until < now() order by kept_until limit ?))
                """, limit);
        int unbounded = kept == limit ? 0 : db.update("""
                delete from delivery_ids where ctid = any(array(
                    select ctid from delivery_ids where kept_until is null and received_at < now() - make_interval(secs => ?) limit ?))
                """, (double) window.toSeconds(), limit - kept);
        return kept + unbounded;
    }
}
