package dev.runner.store;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.apikey.ApiKeyStore;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.integration.IntegrationQueries;
import dev.runner.item.ItemFilter;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStatus;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.run.RunFilter;
import dev.runner.run.RunQueries;
import dev.runner.run.RunStatus;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every list the management API serves reads from an index whose leading columns are its filters, so a tenant's
 * page costs the same whatever other tenants hold: with 10,000 items of other tenants and again with 1,000,000,
 * each list's plan (EXPLAIN ANALYZE) scans the same index, examines the same rows and touches about the same pages;
 * the times are printed. Lists across every tenant read at most a page per status. On a database of its own (the
 * million rows would slow every other test of the run), loaded as pg_restore loads: rows first, indexes after.
 */
class ListPlansIT {

    private static final String TENANT = "t-small";
    private static final int PAGE = 51;
    private static final int OTHER_RUNS = 100_000;

    private static TestStack stack;
    private static String adminUrl;
    private static String databaseName;
    private static Database db;
    private static RunnerConfig.Database owner;
    private static UUID smallRun;

    @BeforeAll
    static void createDatabase() throws SQLException {
        stack = TestStack.create(Map.of());
        owner = stack.config().database();
        adminUrl = owner.jdbcUrl();
        databaseName = "list_plans_" + UUID.randomUUID().toString().substring(0, 8);
        admin("create database " + databaseName);
        String url = adminUrl.replaceFirst("(//[^/]+/)[^?]*", "$1" + databaseName);
        Database.migrate(url, Credentials.fixed(owner.user(), owner.password()));
        db = Database.connect(url, Credentials.fixed(owner.user(), owner.password()), 2, CostTracker.NONE);
        smallRun = smallTenant();
    }

    @AfterAll
    static void dropDatabase() throws SQLException {
        if (db != null) {
            db.close();
        }
        admin("drop database if exists " + databaseName + " with (force)");
        stack.close();
    }

    @Test
    void aTenantsListsReadTheSameRowsFromTheSameIndexWithAMillionRowsOfOtherTenants() {
        Map<String, Database.Sql> lists = tenantLists();
        otherTenants(10_000);
        Map<String, Plan> before = explainAll(lists);
        otherTenants(1_000_000);
        Map<String, Plan> after = explainAll(lists);

        System.out.printf(Locale.ROOT, "%-34s %-34s %9s %9s %9s %9s%n", "list (tenant " + TENANT + ")", "index",
                "rows", "pages", "ms@10k", "ms@1M");
        List<String> wrong = new ArrayList<>();
        lists.keySet().forEach(name -> {
            Plan small = before.get(name);
            Plan large = after.get(name);
            System.out.printf(Locale.ROOT, "%-34s %-34s %9d %4d→%-4d %9.3f %9.3f%n", name, String.join(",", large.indexes()),
                    large.rowsExamined(), small.pages(), large.pages(), small.millis(), large.millis());
            if (large.indexes().isEmpty() || !large.indexes().equals(small.indexes()) || large.sequentialScan()) {
                wrong.add(name + ": scans " + small.indexes() + " with 10,000 other rows, " + large.indexes() + " with 1,000,000"
                        + (large.sequentialScan() ? ", and a table sequentially" : ""));
            }
            if (large.rowsExamined() != small.rowsExamined()) {
                wrong.add(name + ": examines " + small.rowsExamined() + " rows, then " + large.rowsExamined());
            }
            // A hundred times the rows makes the B-trees a level deeper at most: a page more per index descent.
            if (large.pages() > small.pages() + 2L * Math.max(1, large.descents())) {
                wrong.add(name + ": touches " + small.pages() + " pages, then " + large.pages());
            }
        });
        assertEquals(List.of(), wrong);
        assertTrue(after.get("items succeeded").indexes().contains("execution_items_by_tenant"), after.get("items succeeded").toString());
        assertTrue(after.get("runs").indexes().contains("runs_by_tenant_status"), after.get("runs").toString());

        // Across every tenant (the admin), a page reads at most a page of each status, whatever the tables hold.
        Map<String, Database.Sql> everyTenant = new LinkedHashMap<>();
        everyTenant.put("runs of every tenant", RunQueries.pageSql(RunFilter.ALL, null, PAGE));
        everyTenant.put("failed runs of every tenant", RunQueries.pageSql(new RunFilter(null, null, null, null, RunStatus.FAILED), null, PAGE));
        everyTenant.put("dead items of every tenant", ItemQueries.pageSql(ItemStatus.DEAD, ItemFilter.ALL, null, PAGE));
        everyTenant.put("keys of every tenant", ApiKeyStore.pageSql(null, null, PAGE));
        everyTenant.put("tenants", IntegrationQueries.tenantsSql(null, null, PAGE));
        explainAll(everyTenant).forEach((name, plan) -> {
            System.out.printf(Locale.ROOT, "%-34s %-34s %9d %9d %9.3f%n", name, String.join(",", plan.indexes()), plan.rowsExamined(),
                    plan.pages(), plan.millis());
            assertFalse(plan.sequentialScan(), name + ": " + plan);
            assertTrue(plan.rowsExamined() <= (long) PAGE * RunStatus.values().length, name + " examines " + plan.rowsExamined() + " rows");
        });
    }

    /** Every list a tenant key reaches, as the API runs it for tenant {@value #TENANT}. */
    private static Map<String, Database.Sql> tenantLists() {
        RunFilter mine = new RunFilter(TENANT, null, null, null, null);
        ItemFilter myItems = new ItemFilter(TENANT, null, null, null);
        Map<String, Database.Sql> lists = new LinkedHashMap<>();
        lists.put("runs", RunQueries.pageSql(mine, null, PAGE));
        lists.put("runs completed", RunQueries.pageSql(new RunFilter(TENANT, null, null, null, RunStatus.COMPLETED), null, PAGE));
        lists.put("runs of a handler, page 2", RunQueries.pageSql(new RunFilter(TENANT, "crm", "leads", null, null),
                new RunQueries.Position(java.time.Instant.now(), new UUID(Long.MAX_VALUE, Long.MAX_VALUE)), PAGE));
        lists.put("items succeeded", ItemQueries.pageSql(ItemStatus.SUCCEEDED, myItems, null, PAGE));
        lists.put("items queued of a handler", ItemQueries.pageSql(ItemStatus.QUEUED, new ItemFilter(TENANT, "crm", "leads", null), null, PAGE));
        lists.put("items dead", ItemQueries.pageSql(ItemStatus.DEAD, myItems, null, PAGE));
        lists.put("items of a run", ItemQueries.listSql(smallRun, null, null, PAGE));
        lists.put("items of a run, dead", ItemQueries.listSql(smallRun, ItemStatus.DEAD, null, PAGE));
        lists.put("keys", ApiKeyStore.pageSql(TENANT, null, PAGE));
        lists.put("tenants (a tenant key's own)", IntegrationQueries.tenantsSql(TENANT, null, PAGE));
        return lists;
    }

    /**
     * What one plan did: the indexes it scanned, the rows its scans examined (EXPLAIN's rows per loop, whole numbers,
     * times the loops: a merge of a page per status of a few rows each reads as fewer), the pages it touched, its time.
     */
    record Plan(Set<String> indexes, boolean sequentialScan, long rowsExamined, long pages, long descents, double millis) {}

    private static Map<String, Plan> explainAll(Map<String, Database.Sql> lists) {
        Map<String, Plan> plans = new LinkedHashMap<>();
        lists.forEach((name, sql) -> plans.put(name, explain(sql)));
        return plans;
    }

    private static Plan explain(Database.Sql sql) {
        String json = db.query("explain (analyze, buffers, format json) " + sql.text(), row -> row.getString(1), sql.params()).getFirst();
        JsonNode root = Json.parse(json).get(0);
        Set<String> indexes = new TreeSet<>();
        long[] totals = new long[3]; // rows examined, sequential scans, index descents
        walk(root.get("Plan"), indexes, totals);
        JsonNode top = root.get("Plan");
        long pages = top.path("Shared Hit Blocks").asLong() + top.path("Shared Read Blocks").asLong();
        return new Plan(indexes, totals[1] > 0, totals[0], pages, totals[2], root.path("Execution Time").asDouble());
    }

    private static void walk(JsonNode node, Set<String> indexes, long[] totals) {
        String type = node.path("Node Type").asText();
        long loops = Math.max(1, node.path("Actual Loops").asLong());
        if (node.has("Index Name")) {
            indexes.add(node.get("Index Name").asText());
            totals[2] += loops;
        }
        if (type.equals("Seq Scan")) {
            totals[1]++;
        }
        if (type.endsWith("Scan") && !type.equals("Bitmap Index Scan") && !type.equals("Function Scan")) {
            totals[0] += (node.path("Actual Rows").asLong() + node.path("Rows Removed by Filter").asLong()
                    + node.path("Rows Removed by Index Recheck").asLong()) * loops;
        }
        node.path("Plans").forEach(child -> walk(child, indexes, totals));
    }

    /** Tenant {@value #TENANT}: three runs of twenty items, in every status, two keys, an integration. */
    private static UUID smallTenant() {
        db.update("""
                insert into integration_types (integration_key, name, handlers) values ('crm', 'CRM', '{}');
                """);
        db.update("""
                insert into tenant_integrations (tenant_id, integration_key) values (?, 'crm')
                """, TENANT);
        List<UUID> runs = db.query("""
                insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, created_at)
                select gen_random_uuid(), ?, 'crm', 'leads', 'inbound', 'manual', 2,
                       (array['completed', 'running', 'cancelled'])[1 + r % 3], now() - make_interval(secs => 10 - r)
                from generate_series(1, 3) r
                returning run_id
                """, row -> row.getObject(1, UUID.class), TENANT);
        db.update("""
                insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status, attempts, dlq_at)
                select gen_random_uuid(), (?::uuid[])[1 + i % 3], ?, 'crm', 'leads', 's-' || i,
                       (array['succeeded', 'dead', 'queued', 'parked', 'cancelled', 'retrying', 'processing'])[1 + i % 7], 1,
                       case when i % 7 = 1 then now() - make_interval(secs => i) end
                from generate_series(0, 59) i
                """, Database.array("uuid", runs.toArray()), TENANT);
        db.update("""
                insert into api_keys (key_id, tenant_id, name, key_hash)
                select gen_random_uuid(), ?, 'k' || k, sha256(gen_random_uuid()::text::bytea) from generate_series(1, 2) k
                """, TENANT);
        return runs.getFirst();
    }

    /**
     * Other tenants up to {@code items} items in all, with runs, keys and integrations in proportion: each table in one
     * {@code insert … select generate_series}, its secondary indexes dropped before and built again after, foreign keys
     * unchecked (the rows are made consistent), so a million rows load in seconds.
     */
    private static void otherTenants(int items) {
        db.inTransaction(connection -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("set local session_replication_role = replica");
                List<String> rebuild = new ArrayList<>();
                for (String table : List.of("runs", "execution_items", "api_keys", "tenant_integrations")) {
                    rebuild.addAll(dropSecondaryIndexes(connection, table));
                }
                long have = count(connection, "execution_items where tenant_id <> '" + TENANT + "'");
                long runs = Math.max(1, (long) OTHER_RUNS * items / 1_000_000);
                statement.execute("""
                        insert into runs (run_id, tenant_id, integration_key, handler_key, direction, trigger, priority, status, created_at, finished_at)
                        select ('00000000-0000-7000-9000-' || lpad(to_hex(r), 12, '0'))::uuid, 'other-' || (r %% 1000), 'crm', 'leads',
                               'inbound', 'manual', 2, (array['completed', 'completed_with_errors', 'running', 'cancelled', 'failed'])[1 + r %% 5],
                               now() - make_interval(secs => %1$d - r), now()
                        from generate_series(%2$d, %1$d - 1) r
                        """.formatted(runs, count(connection, "runs where tenant_id <> '" + TENANT + "'")));
                statement.execute("""
                        insert into execution_items (item_id, run_id, tenant_id, integration_key, handler_key, external_id, status, attempts,
                                                     dlq_at, finished_at)
                        select ('00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
                               ('00000000-0000-7000-9000-' || lpad(to_hex(i %% %3$d), 12, '0'))::uuid, 'other-' || ((i %% %3$d) %% 1000),
                               'crm', 'leads', 'e-' || i,
                               (array['succeeded', 'succeeded', 'succeeded', 'dead', 'queued', 'retrying', 'processing', 'parked',
                                      'cancelled', 'succeeded'])[1 + i %% 10],
                               1, case when i %% 10 = 3 then now() - make_interval(secs => i) end, now()
                        from generate_series(%1$d, %2$d - 1) i
                        """.formatted(have, items, runs));
                statement.execute("""
                        insert into api_keys (key_id, tenant_id, name, key_hash)
                        select ('00000000-0000-7000-7000-' || lpad(to_hex(k), 12, '0'))::uuid, 'other-' || (k %% 1000), 'k',
                               sha256(k::text::bytea)
                        from generate_series(%d, %d) k
                        """.formatted(have / 10, items / 10 - 1));
                statement.execute("""
                        insert into tenant_integrations (tenant_id, integration_key)
                        select 'other-' || t, 'crm' from generate_series(0, 999) t on conflict do nothing
                        """);
                for (String index : rebuild) {
                    statement.execute(index);
                }
                statement.execute("analyze runs, execution_items, api_keys, tenant_integrations");
            }
            return null;
        });
    }

    /** Drops the table's indexes but its primary key and unique constraints; returns the statements that build them again. */
    private static List<String> dropSecondaryIndexes(Connection connection, String table) throws SQLException {
        List<String[]> indexes = db.query(connection, """
                select i.indexname, i.indexdef from pg_indexes i
                where i.schemaname = 'public' and i.tablename = ?
                  and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
                """, row -> new String[] {row.getString(1), row.getString(2)}, table);
        try (Statement statement = connection.createStatement()) {
            for (String[] index : indexes) {
                statement.execute("drop index " + index[0]);
            }
        }
        return indexes.stream().map(index -> index[1]).toList();
    }

    private static long count(Connection connection, String fromWhere) throws SQLException {
        return db.query(connection, "select count(*) from " + fromWhere, row -> row.getLong(1)).getFirst();
    }

    private static void admin(String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(adminUrl, owner.user(), owner.password());
             Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
