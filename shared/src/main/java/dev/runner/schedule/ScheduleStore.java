package dev.runner.schedule;

import dev.runner.store.Database;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The schedules table: one row per scheduled handler of a tenant integration, with its next fire time. */
public final class ScheduleStore {

    /** A schedule whose time has come. */
    public record Due(String tenantId, String integrationKey, String handlerKey, String expression, Instant dueAt) {

        /** One run per schedule and due time: overlapping ticks insert the same key once. */
        public String fireKey() {
            return tenantId + "/" + integrationKey + "/" + handlerKey + "@" + dueAt;
        }
    }

    private final Database db;

    public ScheduleStore(Database db) {
        this.db = db;
    }

    /** Schedules due at {@code now}, oldest first; read without locks (the tick locks them later). */
    public List<Due> due(Instant now, int limit) {
        return db.query("""
                select tenant_id, integration_key, handler_key, expression, next_fire_at from schedules
                where next_fire_at <= ? order by next_fire_at limit ?
                """, ScheduleStore::due, now, limit);
    }

    /**
     * Locks those of {@code candidates} still due (another tick may have fired them meanwhile) and
     * returns them as they are now; SKIP LOCKED, so overlapping ticks share the work.
     */
    public List<Due> lockDue(Connection connection, List<Due> candidates, Instant now) throws SQLException {
        if (candidates.isEmpty()) {
            return List.of();
        }
        return db.query(connection, """
                select s.tenant_id, s.integration_key, s.handler_key, s.expression, s.next_fire_at from schedules s
                join unnest(?::text[], ?::text[], ?::text[]) as c(tenant_id, integration_key, handler_key)
                  on c.tenant_id = s.tenant_id and c.integration_key = s.integration_key and c.handler_key = s.handler_key
                where s.next_fire_at <= ?
                order by s.next_fire_at
                for update of s skip locked
                """, ScheduleStore::due,
                Database.array("text", candidates.stream().map(Due::tenantId).toArray()),
                Database.array("text", candidates.stream().map(Due::integrationKey).toArray()),
                Database.array("text", candidates.stream().map(Due::handlerKey).toArray()), now);
    }

    public void moveTo(Connection connection, Due schedule, Instant nextFire) throws SQLException {
        db.update(connection, """
                update schedules set next_fire_at = ? where tenant_id = ? and integration_key = ? and handler_key = ?
                """, nextFire, schedule.tenantId(), schedule.integrationKey(), schedule.handlerKey());
    }

    /**
     * Makes a tenant integration's schedules rows match {@code expressions} (handlerKey → expression)
     * inside the caller's transaction. An unchanged expression keeps its next fire time, so saving
     * the same configuration again does not shift the schedule; a new or changed one starts at
     * {@code firstFires}.
     */
    public void replace(Connection connection, String tenantId, String integrationKey, Map<String, String> expressions,
                        Map<String, Instant> firstFires) throws SQLException {
        String[] handlers = firstFires.keySet().toArray(String[]::new);
        db.update(connection, """
                delete from schedules where tenant_id = ? and integration_key = ? and not (handler_key = any(?))
                """, tenantId, integrationKey, Database.array("text", handlers));
        for (var entry : firstFires.entrySet()) {
            db.update(connection, """
                    insert into schedules (tenant_id, integration_key, handler_key, expression, next_fire_at)
                    values (?, ?, ?, ?, ?)
                    on conflict (tenant_id, integration_key, handler_key) do update set
                        next_fire_at = case when schedules.expression = excluded.expression then schedules.next_fire_at else excluded.next_fire_at end,
                        expression = excluded.expression
                    """, tenantId, integrationKey, entry.getKey(), expressions.get(entry.getKey()), entry.getValue());
        }
    }

    private static Due due(java.sql.ResultSet row) throws SQLException {
        return new Due(row.getString(1), row.getString(2), row.getString(3), row.getString(4), row.getTimestamp(5).toInstant());
    }
}
