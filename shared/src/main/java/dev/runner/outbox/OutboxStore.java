package dev.runner.outbox;

import dev.runner.store.Database;
import dev.runner.store.Ids;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * The messages committed work still owes its queues (table pending_sends). A producer records what
 * it owes in the transaction that commits the rows, sends after the commit, then settles; what is
 * left unsettled after a grace was never sent (a failed send, a process stopped first) and the
 * scheduler's sweep sends it. One row per commit: two statements per producer call, not per item.
 */
public final class OutboxStore {

    /** What the owed messages carry: item ids (an items tier) or run ids (a runs tier). */
    public enum Kind {
        ITEMS, RUNS;

        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Kind fromWire(String wire) {
            return valueOf(wire.toUpperCase(Locale.ROOT));
        }
    }

    /** Messages owed for {@code ids}, recorded as {@code sendId}; {@link #NONE} when nothing was owed. */
    public record Owed(UUID sendId, Kind kind, List<UUID> ids) {
        public static final Owed NONE = new Owed(null, Kind.ITEMS, List.of());

        public Owed {
            ids = List.copyOf(ids);
        }
    }

    private final Database db;
    private final Clock clock;

    public OutboxStore(Database db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** Records, inside the caller's transaction, that {@code ids} are owed their messages; nothing for none. */
    public Owed owe(Connection connection, Kind kind, Collection<UUID> ids) throws SQLException {
        if (ids.isEmpty()) {
            return Owed.NONE;
        }
        Owed owed = new Owed(Ids.next(clock), kind, List.copyOf(ids));
        db.update(connection, "insert into pending_sends (send_id, kind, ids) values (?, ?, ?)",
                owed.sendId(), kind.wireName(), Database.array("uuid", owed.ids().toArray()));
        return owed;
    }

    /** The messages were sent. */
    public void settle(Collection<Owed> sent) {
        List<UUID> sendIds = sent.stream().map(Owed::sendId).filter(id -> id != null).toList();
        if (!sendIds.isEmpty()) {
            db.update("delete from pending_sends where send_id = any(?)", Database.array("uuid", sendIds.toArray()));
        }
    }

    /**
     * Owed messages whose last try is older than {@code grace}: their send failed or never ran. Each
     * is marked tried now, so a sweep whose own send fails tries again a grace later, and two
     * overlapping sweeps never take the same row. The pick is a materialized CTE: a LIMIT … SKIP
     * LOCKED subquery under {@code IN} may be rescanned by the plan and so touch more rows than the limit.
     */
    public List<Owed> overdue(Duration grace, int limit) {
        return db.query("""
                with picked as materialized (
                    select send_id from pending_sends where tried_at < now() - make_interval(secs => ?)
                    order by tried_at limit ? for update skip locked)
                update pending_sends s set tried_at = now()
                from picked p where s.send_id = p.send_id
                returning s.send_id, s.kind, s.ids
                """, row -> new Owed(row.getObject(1, UUID.class), Kind.fromWire(row.getString(2)),
                Arrays.asList((UUID[]) row.getArray(3).getArray())), grace.toMillis() / 1000.0, limit);
    }
}
