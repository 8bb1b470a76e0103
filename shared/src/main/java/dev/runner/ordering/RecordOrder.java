package dev.runner.ordering;

import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.run.CompletedRun;
import dev.runner.store.Database;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The items of a record go one at a time, in accepted (id) order. The claim and the record of a batch holding
 * items of an ordered handler go through functions that wrap the item batch's own
 * ({@code runner_claim_in_record_order}, {@code runner_record_in_record_order}): still one statement each. An
 * item waits while an earlier item of its record is {@linkplain #OPEN open}; an item handed to the DLQ has ended.
 */
public final class RecordOrder {

    /**
     * An item of a record that is still to end, so later ones wait: queued, processing, retrying, parked, and
     * pending (an item waiting for its partner's callback, dev.runner.callbacks's status, named here by its wire
     * name). The functions of V67 and the index execution_items_by_record list the same.
     */
    public static final Set<String> OPEN = Set.of(ItemStatus.QUEUED.wireName(), ItemStatus.PROCESSING.wireName(),
            ItemStatus.RETRYING.wireName(), ItemStatus.PARKED.wireName(), "pending");

    /** How long a waiting item stays unsent before the overdue sweep brings it back to the claim's check. */
    public static final Duration RECHECK = Duration.ofMinutes(5);

    /** What a batch's record came to: the runs it ended, and the items it released to go next (to be sent). */
    public record Recorded(List<CompletedRun> completed, List<ItemJob> released) {}

    private final ItemStore items;
    private final Database db;
    private final Duration recheck;

    /**
     * @param recheck how long a waiting item stays unsent before the overdue sweep brings it back to the claim's
     *                check, should no release come (its earlier item ended by a path that releases nothing)
     */
    public RecordOrder(ItemStore items, Database db, Duration recheck) {
        this.items = items;
        this.db = db;
        this.recheck = recheck;
    }

    /** Whether a handler's items go one at a time per record. */
    public static boolean ordered(HandlerSpec spec) {
        return spec != null && spec.configs().orderedByRecord();
    }

    /**
     * Claims {@code itemIds} as {@link ItemStore#claim} does, except that each of {@code orderedIds} with an
     * earlier open item of its record waits ({@link ItemStore.Claim#waiting}): acknowledged, no attempt, no message.
     */
    public ItemStore.Claim claim(Collection<UUID> itemIds, Collection<UUID> orderedIds, Duration lease) {
        if (orderedIds.isEmpty()) {
            return items.claim(itemIds, lease);
        }
        return items.claim(new Database.Sql("""
                select item_id, attempts, payload, early_ms, held from runner_claim_in_record_order(?::uuid[], ?::uuid[], ?, ?)
                """, Database.array("uuid", itemIds.toArray()), Database.array("uuid", orderedIds.toArray()),
                lease.toMillis() / 1000.0, (double) recheck.toSeconds()));
    }

    /**
     * Records a batch's results as {@link ItemStore#record(List, Collection)} does and, for each record whose item
     * among {@code orderedIds} this ended, releases its next item when that one waits for it. One statement.
     */
    public Recorded record(List<ItemStore.Result> results, Collection<UUID> runsToCheck, Collection<UUID> orderedIds) {
        if (orderedIds.isEmpty() || results.isEmpty()) {
            return new Recorded(items.record(results, runsToCheck), List.of());
        }
        List<CompletedRun> completed = new ArrayList<>();
        List<ItemJob> released = new ArrayList<>();
        db.query(new Database.Sql("""
                select run_id, item_id, tenant_id, integration_key, handler_key, direction, trigger, external_id, attempts,
                       created_at, finished_at, kind
                from runner_record_in_record_order(?::uuid[], ?::text[], ?::text[], ?::int[], ?::boolean[], ?::int[], ?::uuid[], ?::uuid[])
                """, ItemStore.ResultColumns.of(results).with(Database.array("uuid", runsToCheck.toArray()),
                Database.array("uuid", orderedIds.toArray()))), row -> {
                    if ("released".equals(row.getString(12))) {
                        released.add(ItemStore.job(row));
                    } else {
                        completed.add(new CompletedRun(row.getObject(1, UUID.class), row.getString(3),
                                Duration.between(row.getTimestamp(10).toInstant(), row.getTimestamp(11).toInstant())));
                    }
                    return Boolean.TRUE;
                });
        return new Recorded(completed, released);
    }
}
