package dev.runner.local.faults;

import dev.runner.embedded.EmbeddedServers;
import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.run.RunJob;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What Runner recorded, read from its Postgres tables on a connection of the fault run's own (not
 * the functions' pools), for the fault run's tenants only. The connection is opened again after
 * Postgres restarts; a read attempted while Postgres is down throws {@link SQLException} and the
 * caller tries later.
 *
 * <p>"Marked succeeded twice" is observed with an audit trigger this class installs in the database
 * under test (it is not part of Runner's schema): every write that sets an item succeeded, and every
 * write to an item already succeeded, leaves a row in {@code fault_run_marks}. Nothing else sees a
 * second write of the same value: {@code finished_at} keeps only the last, {@code history} only errors.
 */
final class RunnerRecords implements AutoCloseable {

    /** Where the runs and items stand: what is still open, and how those that ended ended. */
    record Standing(long openItems, long openRuns, Map<String, Long> itemsByStatus, Map<String, Long> runsByStatus,
                    long deadWithoutDlqAt) {}

    private final EmbeddedServers.Endpoints endpoints;
    private final String tenantPattern;
    private Connection connection;

    /** @param tenantPrefix the fault run's tenants: ids starting with it */
    RunnerRecords(EmbeddedServers.Endpoints endpoints, String tenantPrefix) {
        this.endpoints = endpoints;
        this.tenantPattern = tenantPrefix.replace("%", "\\%").replace("_", "\\_") + "%";
    }

    /**
     * The audit of success marks; before the workload starts. The trigger writes as the audit's owner
     * (security definer): the functions log in with a role of their own, which may not write here.
     */
    synchronized void installAudit() throws SQLException {
        try (var statement = connection().createStatement()) {
            statement.execute("""
                    create table if not exists fault_run_marks (
                        item_id uuid not null, from_status text not null, to_status text not null,
                        at timestamptz not null default clock_timestamp())
                    """);
            statement.execute("""
                    create or replace function fault_run_mark() returns trigger language plpgsql
                    security definer set search_path = public as $$
                    begin
                        insert into fault_run_marks (item_id, from_status, to_status) values (new.item_id, old.status, new.status);
                        return null;
                    end $$
                    """);
            statement.execute("drop trigger if exists fault_run_marks on execution_items");
            statement.execute("""
                    create trigger fault_run_marks after update on execution_items for each row
                    when (new.status = 'succeeded' or old.status = 'succeeded') execute function fault_run_mark()
                    """);
        }
    }

    Standing standing() throws SQLException {
        Map<String, Long> items = new HashMap<>();
        long[] deadWithoutDlqAt = {0};
        query("""
                select status, count(*), count(*) filter (where status = 'dead' and dlq_at is null)
                from execution_items where tenant_id like ? group by status
                """, row -> {
            items.put(row.getString(1), row.getLong(2));
            deadWithoutDlqAt[0] += row.getLong(3);
        }, tenantPattern);
        Map<String, Long> runs = new HashMap<>();
        long[] openRuns = {0};
        query("select status, count(*), count(*) filter (where finished_at is null) from runs where tenant_id like ? group by status",
                row -> {
                    runs.put(row.getString(1), row.getLong(2));
                    openRuns[0] += row.getLong(3);
                }, tenantPattern);
        long openItems = items.entrySet().stream().filter(e -> !e.getKey().equals("succeeded") && !e.getKey().equals("dead"))
                .mapToLong(Map.Entry::getValue).sum();
        return new Standing(openItems, openRuns[0], items, runs, deadWithoutDlqAt[0]);
    }

    /** Up to {@code limit} items at random, whatever their status, as the item jobs their messages carry. */
    List<ItemJob> randomItems(int limit, String status) throws SQLException {
        List<ItemJob> jobs = new ArrayList<>();
        query("""
                select e.run_id, e.item_id, e.tenant_id, e.integration_key, e.handler_key, r.direction, r.trigger, e.external_id, e.attempts
                from execution_items e join runs r on r.run_id = e.run_id
                where e.tenant_id like ? and (?::text is null or e.status = ?)
                order by random() limit ?
                """, row -> jobs.add(ItemStore.job(row)), tenantPattern, status, status, limit);
        return jobs;
    }

    /** Up to {@code limit} runs of a trigger at random, whatever their status, as their RunJobs. */
    List<RunJob> randomRuns(int limit, Trigger trigger) throws SQLException {
        List<RunJob> jobs = new ArrayList<>();
        query("""
                select run_id, tenant_id, integration_key, handler_key, direction, trigger from runs
                where tenant_id like ? and trigger = ? order by random() limit ?
                """, row -> jobs.add(new RunJob(row.getObject(1, UUID.class), row.getString(2), row.getString(3), row.getString(4),
                Direction.fromWire(row.getString(5)), Trigger.fromWire(row.getString(6)), null)),
                tenantPattern, trigger.wireName(), limit);
        return jobs;
    }

    /** Every item of the fault run's tenants, as (tenant, integration, externalId). */
    Set<List<String>> itemKeys() throws SQLException {
        Set<List<String>> keys = new HashSet<>();
        query("select tenant_id, integration_key, external_id from execution_items where tenant_id like ?",
                row -> keys.add(List.of(row.getString(1), row.getString(2), row.getString(3))), tenantPattern);
        return keys;
    }

    /**
     * Deliveries (webhooks, ingest messages) processed more than once: an externalId the fault run sends in one
     * delivery only, with more than one item row. A delivery sent again must be answered, not made again.
     */
    long deliveriesMadeTwice() throws SQLException {
        long[] count = {0};
        query("""
                select count(*) from (
                    select 1 from execution_items e join runs r on r.run_id = e.run_id
                    where e.tenant_id like ? and r.trigger in ('webhook', 'queue')
                    group by e.tenant_id, e.integration_key, e.external_id having count(*) > 1) twice
                """, row -> count[0] = row.getLong(1), tenantPattern);
        return count[0];
    }

    /** The externalIds of each run's items. */
    Map<UUID, Set<String>> externalIdsByRun(Set<UUID> runIds) throws SQLException {
        Map<UUID, Set<String>> byRun = new HashMap<>();
        query("select run_id, external_id from execution_items where run_id = any(?)",
                row -> byRun.computeIfAbsent(row.getObject(1, UUID.class), r -> new HashSet<>()).add(row.getString(2)),
                (Object) runIds.toArray(UUID[]::new));
        return byRun;
    }

    Map<UUID, String> runStatuses(Set<UUID> runIds) throws SQLException {
        Map<UUID, String> statuses = new HashMap<>();
        query("select run_id, status from runs where run_id = any(?)",
                row -> statuses.put(row.getObject(1, UUID.class), row.getString(2)), (Object) runIds.toArray(UUID[]::new));
        return statuses;
    }

    /** Up to {@code limit} items not ended, each as its row says: what a stuck item's report shows. */
    List<String> openItems(int limit) throws SQLException {
        List<String> open = new ArrayList<>();
        query("""
                select item_id, status, attempts, extract(epoch from next_visible_at - now()), extract(epoch from now() - updated_at),
                       extract(epoch from now() - claimed_at), last_error, history::text
                from execution_items where tenant_id like ? and status not in ('succeeded', 'dead') limit ?
                """, row -> open.add(String.format("%s %s, attempts %d, due in %s s, updated %.1f s ago, claimed %s s ago, last error %s, history %s",
                row.getObject(1, UUID.class), row.getString(2), row.getInt(3), row.getString(4), row.getDouble(5), row.getString(6),
                row.getString(7), row.getString(8))), tenantPattern, limit);
        return open;
    }

    /** Ids of the fault run's items in one status. */
    Set<String> itemIds(String status) throws SQLException {
        Set<String> ids = new HashSet<>();
        query("select item_id from execution_items where tenant_id like ? and status = ?",
                row -> ids.add(row.getObject(1, UUID.class).toString()), tenantPattern, status);
        return ids;
    }

    /**
     * Items Runner marked succeeded more than once, or wrote to after marking them succeeded: what
     * "done twice" means in Runner's own records.
     */
    long markedSucceededTwice() throws SQLException {
        long[] count = {0};
        query("""
                select count(distinct m.item_id) from fault_run_marks m join execution_items e on e.item_id = m.item_id
                where e.tenant_id like ?
                  and (m.from_status = 'succeeded'
                       or m.item_id in (select item_id from fault_run_marks where to_status = 'succeeded'
                                        group by item_id having count(*) > 1))
                """, row -> count[0] = row.getLong(1), tenantPattern);
        return count[0];
    }

    @FunctionalInterface
    private interface Row {
        void read(ResultSet row) throws SQLException;
    }

    /** One statement at a time: the fault run's threads share this connection. */
    private synchronized void query(String sql, Row reader, Object... params) throws SQLException {
        try (PreparedStatement statement = connection().prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                if (params[i] == null) {
                    statement.setNull(i + 1, Types.VARCHAR);
                } else if (params[i] instanceof UUID[] ids) {
                    statement.setArray(i + 1, statement.getConnection().createArrayOf("uuid", ids));
                } else {
                    statement.setObject(i + 1, params[i]);
                }
            }
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    reader.read(rows);
                }
            }
        } catch (SQLException e) {
            // Postgres restarted under this connection, or is down: open a new one on the next read.
            closeConnection();
            throw e;
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            connection = DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
        }
        return connection;
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // it is broken already
            }
            connection = null;
        }
    }

    @Override
    public synchronized void close() {
        closeConnection();
    }
}
