package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostMeter;
import dev.runner.json.Json;
import dev.runner.local.LocalOptions;
import dev.runner.local.LocalRuntime;
import dev.runner.local.lambda.InvocationMeter;
import dev.runner.local.sqs.QueuePoller;
import dev.runner.testing.FakeHandler;
import io.lettuce.core.RedisClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * The whole system as the local runtime wires it from template.yaml (same pollers, batch sizes and
 * concurrency), a handler service speaking the contract, and the meters a workload reads: SQS
 * requests by operation (the functions' own, counted by an SDK interceptor, and the event source
 * mappings', counted by the runtime), Redis commands counted by the server, Postgres statements
 * counted by the server (pg_stat_statements) and by the functions' client, each function's
 * invocations, time and CPU ({@link InvocationMeter}), and the machine's CPU by thread and process
 * ({@link CpuMeter}).
 */
final class BenchStack implements AutoCloseable {

    static final String SIGNING_SECRET = "bench-handler-secret";
    /** The role the benchmark watches Postgres with, so its own statements are not counted. */
    private static final String WATCHER_ROLE = "bench_watcher";
    /** Share of the time invocations may run alone so all their threads' CPU is measured (-Dbench.aloneShare). */
    static final double ALONE_SHARE = Double.parseDouble(System.getProperty("bench.aloneShare", "0.05"));
    /** Functions whose every invocation runs alone ({@code -Dbench.aloneAlways=RunWorkerFunction,…}): their all-thread CPU is then measured, not estimated from few samples. */
    static final Set<String> ALWAYS_ALONE = Arrays.stream(System.getProperty("bench.aloneAlways", "").split(","))
            .map(String::strip).filter(id -> !id.isEmpty()).collect(Collectors.toSet());

    final LocalRuntime runtime;
    /** On platform threads of its own: its CPU is the handler's, not the functions' virtual threads'. */
    final FakeHandler handlers = FakeHandler.start(SIGNING_SECRET, Executors.newCachedThreadPool(named("handler-service")));
    private final HttpClient http = HttpClient.newHttpClient();
    private final RedisClient redisClient;

    BenchStack(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        env.put("RUNNER_HANDLER_SIGNING_SECRET", SIGNING_SECRET);
        env.put("RUNNER_API_KEY", "bench-key");
        // Postgres commits as Aurora's do (fsync, synchronous_commit, full_page_writes): every figure pays a commit's cost.
        env.putIfAbsent("RUNNER_PG_DURABLE", Boolean.toString(pgDurable()));
        runtime = LocalRuntime.start(LocalOptions.defaults(Path.of("template.yaml"), env).withFreePorts().withDemo(false),
                new InvocationMeter(ALONE_SHARE, ALWAYS_ALONE));
        runtime.sqsFrontEnd().inspect(new SqsRequestCounter());
        redisClient = RedisClient.create(runtime.endpoints().redisUrl());
        prepareWatcher();
        postmaster = postmasterProcess();
    }

    /** Whether the stack's Postgres commits durably: RUNNER_PG_DURABLE if set, else -Dbench.pgDurable, else true. */
    static boolean pgDurable() {
        String value = System.getenv("RUNNER_PG_DURABLE");
        return Boolean.parseBoolean(value != null ? value : System.getProperty("bench.pgDurable", "true"));
    }

    /** The embedded Postgres server's process, whose CPU (and its backends') is read from /proc; a restart makes a new one. */
    private volatile long postmaster;

    private long postmasterProcess() {
        return CpuMeter.postmaster(URI.create(runtime.endpoints().jdbcUrl().substring("jdbc:".length())).getPort());
    }

    private static java.util.concurrent.ThreadFactory named(String name) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** pg_stat_statements, and a role of the benchmark's own whose statements are left out of the counts. */
    private void prepareWatcher() {
        asSuperuser("prepare Postgres for the benchmark", admin -> {
            try (var statement = admin.createStatement()) {
                statement.execute("create extension if not exists pg_stat_statements");
                statement.execute("create role " + WATCHER_ROLE + " login superuser password '" + WATCHER_ROLE + "'");
            }
        });
    }

    /** What the benchmark does to Postgres as its superuser, on a connection of its own. */
    interface SuperuserWork {
        void run(java.sql.Connection admin) throws java.sql.SQLException;
    }

    void asSuperuser(String what, SuperuserWork work) {
        var endpoints = runtime.endpoints();
        try (var admin = java.sql.DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword())) {
            work.run(admin);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("cannot " + what + ": " + e.getMessage(), e);
        }
    }

    /** A type with one handler at the handler service, and the given tenants enabled for it. */
    void integration(String integrationKey, String handlerKey, boolean batch, ObjectNode configs, List<String> tenants, String webhookSecret) {
        ObjectNode type = Json.object().put("name", integrationKey);
        ObjectNode handler = type.putObject("handlers").putObject(handlerKey);
        handler.put("url", handlers.url(handlerKey)).put("direction", "inbound").put("batch", batch);
        handler.set("configs", configs);
        call("PUT", "/types/" + integrationKey, type, 200);
        for (String tenant : tenants) {
            call("PUT", "/tenants/" + tenant + "/integrations/" + integrationKey,
                    Json.object().put("enabled", true).put("webhookSecret", webhookSecret), 200);
        }
    }

    /**
     * Tenants {@code prefix0} … {@code prefix(n-1)} enabled for the integration with one webhook secret, in one
     * statement as the schema's owner: the rows {@code PUT /tenants/{t}/integrations/{key}} writes for a new tenant.
     */
    void tenantIntegrations(String prefix, int n, String integrationKey, String webhookSecret) {
        asSuperuser("write the tenant integrations", admin -> {
            try (var insert = admin.prepareStatement("""
                    insert into tenant_integrations (tenant_id, integration_key, enabled, webhook_secrets)
                    select ? || g, ?, true, array[?] from generate_series(0, ? - 1) g""")) {
                insert.setString(1, prefix);
                insert.setString(2, integrationKey);
                insert.setString(3, webhookSecret);
                insert.setInt(4, n);
                insert.executeUpdate();
            }
        });
    }

    UUID manualRun(String tenant, String integrationKey, String handlerKey) {
        JsonNode created = call("POST", "/runs", Json.object().put("tenantId", tenant).put("integrationKey", integrationKey)
                .put("handlerKey", handlerKey), 202);
        return UUID.fromString(created.path("runId").asText());
    }

    /**
     * A manual run for each tenant, their POST /runs sent at once (as a client starting every
     * tenant's import does; the reference enqueues its whole dataset in one call); ids in order.
     */
    List<UUID> manualRuns(List<String> tenants, String integrationKey, String handlerKey) {
        try (var clients = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<UUID>> started = tenants.stream()
                    .map(tenant -> clients.submit(() -> manualRun(tenant, integrationKey, handlerKey))).toList();
            List<UUID> runIds = new java.util.ArrayList<>(started.size());
            for (var run : started) {
                runIds.add(run.get());
            }
            return runIds;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting runs", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("a run did not start: " + e.getCause(), e.getCause());
        }
    }

    JsonNode run(UUID runId) {
        return call("GET", "/runs/" + runId, null, 200);
    }

    /**
     * Waits until every run has ended (completed, with errors, or failed); returns when the last
     * one did, by Postgres's clock, so how often it looks does not change the time measured. Asks
     * Postgres on a connection of its own, as a role whose statements are not counted.
     */
    java.time.Instant awaitEnded(Collection<UUID> runIds, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        for (UUID runId : runIds) {
            while (!ended(runId)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("run " + runId + " did not end within " + within + ": " + run(runId));
                }
                LockSupport.parkNanos(200_000_000);
            }
        }
        return lastFinished(runIds);
    }

    private synchronized java.time.Instant lastFinished(Collection<UUID> runIds) {
        scalar("select 1", null, null); // opens the watcher connection
        try (var statement = watcher.prepareStatement("select max(finished_at) from runs where run_id = any(?)")) {
            statement.setArray(1, watcher.createArrayOf("uuid", runIds.toArray()));
            try (var rows = statement.executeQuery()) {
                rows.next();
                return rows.getTimestamp(1).toInstant();
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Items of a run in one status, read past the meters. */
    long count(UUID runId, String status) {
        return scalar("select count(*) from execution_items where run_id = ? and status = ?", runId, status);
    }

    /** Items of scheduled runs in one status, read past the meters. */
    /**
     * For the webhook items whose externalId starts with {@code prefix}: milliseconds from the item's insert (the
     * accept's transaction) to its claim (the item worker's), by Postgres's clock. What a webhook waited before its
     * worker took it: the send, the tier, the poller, the invocation's admission.
     */
    List<Double> webhookClaimDelays(String prefix) {
        List<Double> delays = new java.util.ArrayList<>();
        asSuperuser("read the webhook items' claim times", admin -> {
            try (var statement = admin.prepareStatement("""
                    select extract(epoch from e.claimed_at - e.created_at) * 1000 from execution_items e join runs r using (run_id)
                    where r.trigger = 'webhook' and e.external_id like ? and e.claimed_at is not null""")) {
                statement.setString(1, prefix + "%");
                try (var rows = statement.executeQuery()) {
                    while (rows.next()) {
                        delays.add(rows.getDouble(1));
                    }
                }
            }
        });
        delays.sort(Double::compare);
        return delays;
    }

    long scheduleItems(String status) {
        return scalar("select count(*) from execution_items e join runs r using (run_id) where r.trigger = 'schedule' and e.status = ?",
                null, status);
    }

    private boolean ended(UUID runId) {
        return scalar("select count(*) from runs where run_id = ? and finished_at is not null", runId, null) == 1;
    }

    private synchronized long scalar(String sql, UUID runId, String status) {
        try {
            if (watcher == null) {
                var endpoints = runtime.endpoints();
                watcher = java.sql.DriverManager.getConnection(endpoints.jdbcUrl(), WATCHER_ROLE, WATCHER_ROLE);
            }
            try (var statement = watcher.prepareStatement(sql)) {
                int index = 1;
                if (runId != null) {
                    statement.setObject(index++, runId);
                }
                if (status != null) {
                    statement.setString(index, status);
                }
                try (var rows = statement.executeQuery()) {
                    rows.next();
                    return rows.getLong(1);
                }
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private java.sql.Connection watcher;

    JsonNode call(String method, String path, JsonNode body, int expected) {
        var request = HttpRequest.newBuilder(runtime.apiUrl().resolve(path))
                .header("Authorization", "Bearer bench-key")
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != expected) {
                throw new IllegalStateException(method + " " + path + " answered " + response.statusCode() + ": " + response.body());
            }
            return Json.parse(response.body());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(method + " " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** POSTs raw bytes to a public route (webhooks); returns the status. */
    int post(String path, byte[] body, Map<String, String> headers) {
        var request = HttpRequest.newBuilder(runtime.apiUrl().resolve(path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(request::header);
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The meters at one instant. */
    record Meters(long nanoTime, Map<String, Long> sqs, long sqsChunks, long deferrals, QueuePoller.Requests eventSource, long redisCommands,
                  long redisClientCommands, long redisRoundTrips, long postgresStatements, PgStatements postgres, PgWal wal,
                  InvocationMeter.Snapshot invocations, CpuMeter.Reading cpuReading, CpuMeter.Used cpu) {

        /** What happened between {@code before} and this. */
        Meters since(Meters before) {
            Map<String, Long> sqsDelta = new HashMap<>();
            sqs.forEach((op, n) -> {
                long d = n - before.sqs.getOrDefault(op, 0L);
                if (d > 0) {
                    sqsDelta.put(op, d);
                }
            });
            return new Meters(nanoTime - before.nanoTime, sqsDelta, sqsChunks - before.sqsChunks, deferrals - before.deferrals,
                    eventSource.minus(before.eventSource),
                    redisCommands - before.redisCommands, redisClientCommands - before.redisClientCommands,
                    redisRoundTrips - before.redisRoundTrips, postgresStatements - before.postgresStatements,
                    postgres.minus(before.postgres), wal.minus(before.wal), invocations.since(before.invocations), null,
                    CpuMeter.between(before.cpuReading, cpuReading));
        }

        /** SQS requests (what W3 subtracts): the functions' and the event source mappings'. */
        Meters minus(Meters other) {
            Map<String, Long> sqsLeft = new HashMap<>(sqs);
            other.sqs.forEach((op, n) -> sqsLeft.merge(op, -n, Long::sum));
            return new Meters(nanoTime, sqsLeft, sqsChunks - other.sqsChunks, deferrals - other.deferrals, eventSource.minus(other.eventSource),
                    redisCommands - other.redisCommands, redisClientCommands - other.redisClientCommands,
                    redisRoundTrips - other.redisRoundTrips, postgresStatements - other.postgresStatements,
                    postgres.minus(other.postgres), wal.minus(other.wal), invocations, null, cpu);
        }

        /** Every SQS request: the functions' (SDK) and the event source mappings' receives and deletes. */
        long sqsTotal() {
            return SqsRequestCounter.total(sqs) + eventSource.receives() + eventSource.deleteBatches();
        }

        /** Every SQS request in 64 KiB chunks, as SQS bills them. */
        long sqsBilled() {
            return sqsChunks + eventSource.chunks();
        }

        /** The requests by operation, the event source mappings' included. */
        Map<String, Long> sqsByOperation() {
            Map<String, Long> all = new java.util.TreeMap<>(sqs);
            all.merge("ReceiveMessage", eventSource.receives(), Long::sum);
            all.merge("DeleteMessageBatch", eventSource.deleteBatches(), Long::sum);
            all.values().removeIf(n -> n == 0);
            return all;
        }
    }

    /**
     * Statements Postgres ran (pg_stat_statements, the benchmark's own left out): all, and transaction control among
     * them; and the transactions it ended in Runner's database (pg_stat_database, commits and rollbacks: the
     * benchmark's own few reads of the meters included).
     */
    record PgStatements(long all, long transactionControl, long transactions) {
        PgStatements minus(PgStatements earlier) {
            return new PgStatements(all - earlier.all, transactionControl - earlier.transactionControl, transactions - earlier.transactions);
        }

        long work() {
            return all - transactionControl;
        }
    }

    /** The WAL Postgres wrote: bytes (by its insert position), records and full-page images (pg_stat_wal). */
    record PgWal(long bytes, long records, long fullPageImages) {
        PgWal minus(PgWal earlier) {
            return new PgWal(bytes - earlier.bytes, records - earlier.records, fullPageImages - earlier.fullPageImages);
        }
    }

    Meters meters() {
        CostMeter.Costs costs = runtime.costs().snapshot();
        return new Meters(System.nanoTime(), SqsRequestCounter.snapshot(), SqsRequestCounter.chunks(), SqsRequestCounter.deferrals(),
                runtime.eventSourceRequests(),
                redisServerCommands(), costs.redisCommands(), costs.redisRoundTrips(), costs.sqlStatements(), postgresStatements(),
                postgresWal(), runtime.invocations(), CpuMeter.read(postmaster), null);
    }

    /**
     * The statements that took Postgres the most time since it started (warm-up included), with their
     * calls, rows and mean time: where its CPU per item goes ({@code -Dbench.pgTop=N} after W1).
     */
    synchronized String topStatements(int n) {
        scalar("select 1", null, null); // opens the watcher connection
        StringBuilder top = new StringBuilder("  Postgres's top statements by total time (warm-up included):\n");
        try (var statement = watcher.prepareStatement("""
                select total_exec_time, calls, rows, mean_exec_time, regexp_replace(query, '\\s+', ' ', 'g')
                from pg_stat_statements s join pg_roles r on r.oid = s.userid
                where r.rolname <> ? order by total_exec_time desc limit ?""")) {
            statement.setString(1, WATCHER_ROLE);
            statement.setInt(2, n);
            try (var rows = statement.executeQuery()) {
                while (rows.next()) {
                    String query = rows.getString(5);
                    top.append(String.format("    %8.0f ms %7d calls %8d rows %6.3f ms mean  %s%n", rows.getDouble(1), rows.getLong(2),
                            rows.getLong(3), rows.getDouble(4), query.length() > 160 ? query.substring(0, 160) + "…" : query));
                }
            }
        } catch (java.sql.SQLException e) {
            top.append("    (not read: ").append(e.getMessage()).append(")\n");
        }
        return top.toString();
    }

    /** Postgres's own count of the statements it ran for everyone but the benchmark's watcher. */
    private synchronized PgStatements postgresStatements() {
        scalar("select 1", null, null); // opens the watcher connection
        try (var statement = watcher.prepareStatement("""
                select coalesce(sum(calls), 0),
                       coalesce(sum(calls) filter (where query ~* '^\\s*(begin|commit|rollback|start transaction|set|show|reset|discard)'), 0)
                from pg_stat_statements s join pg_roles r on r.oid = s.userid
                where r.rolname <> ?""")) {
            statement.setString(1, WATCHER_ROLE);
            long all;
            long control;
            try (var rows = statement.executeQuery()) {
                rows.next();
                all = rows.getLong(1);
                control = rows.getLong(2);
            }
            try (var transactions = watcher.prepareStatement(
                    "select xact_commit + xact_rollback from pg_stat_database where datname = current_database()");
                 var rows = transactions.executeQuery()) {
                rows.next();
                return new PgStatements(all, control, rows.getLong(1));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A statement's time per call in ms since the last reset, over every statement whose text (spaces folded) is like the pattern. */
    record StatementTimes(double mean, double deviation, double longest) {}

    synchronized StatementTimes statementTimes(String likePattern) {
        scalar("select 1", null, null); // opens the watcher connection
        try (var statement = watcher.prepareStatement("""
                select coalesce(sum(mean_exec_time * calls) / nullif(sum(calls), 0), 0), coalesce(max(stddev_exec_time), 0),
                       coalesce(max(max_exec_time), 0)
                from pg_stat_statements where regexp_replace(query, '\\s+', ' ', 'g') like ?""")) {
            statement.setString(1, likePattern);
            try (var rows = statement.executeQuery()) {
                rows.next();
                return new StatementTimes(rows.getDouble(1), rows.getDouble(2), rows.getDouble(3));
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Forgets what pg_stat_statements counted so far (the soak measures each round on its own). */
    void resetStatementStatistics() {
        scalar("select count(*) from pg_stat_statements_reset()", null, null);
    }

    /** The item table's size on disk, its indexes and TOAST included. */
    long itemTableBytes() {
        return scalar("select pg_total_relation_size('execution_items')", null, null);
    }

    /** The item table's indexes' size on disk. */
    long itemIndexBytes() {
        return scalar("select pg_indexes_size('execution_items')", null, null);
    }

    /** What vacuum knows of the item table: rows live and dead, and how often autovacuum has visited it. */
    record TableState(long live, long dead, long autovacuums) {}

    TableState itemTableState() {
        return new TableState(scalar("select n_live_tup from pg_stat_user_tables where relname = 'execution_items'", null, null),
                scalar("select n_dead_tup from pg_stat_user_tables where relname = 'execution_items'", null, null),
                scalar("select autovacuum_count from pg_stat_user_tables where relname = 'execution_items'", null, null));
    }

    /** Items that succeeded, every run's, read past the meters. */
    long succeededItems() {
        return scalar("select count(*) from execution_items where status = 'succeeded'", null, null);
    }

    /** Runs {@code lane} on {@code n} threads at once and waits for all of them; a lane's failure fails the whole. */
    static void lanes(int n, Runnable lane) {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                running.add(pool.submit(lane));
            }
            for (Future<?> future : running) {
                try {
                    future.get();
                } catch (Exception e) {
                    throw new IllegalStateException("a sender failed: " + e, e);
                }
            }
        } finally {
            pool.shutdown();
        }
    }

    /** Items of an integration in a status, read past the meters. */
    synchronized long items(String integrationKey, String status) {
        scalar("select 1", null, null); // opens the watcher's connection
        try (var statement = watcher.prepareStatement("select count(*) from execution_items where integration_key = ? and status = ?")) {
            statement.setString(1, integrationKey);
            statement.setString(2, status);
            try (var rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs Postgres holds now. */
    long runCount() {
        return scalar("select count(*) from runs", null, null);
    }

    /**
     * How often autovacuum looks at each database ({@code autovacuum_naptime}): the embedded server has
     * Postgres's default, a minute; Aurora PostgreSQL's default is 5 s, RDS for PostgreSQL's 15 s.
     */
    void autovacuumNaptime(String naptime) {
        asSuperuser("set autovacuum_naptime", admin -> {
            try (var statement = admin.createStatement()) {
                statement.execute("alter system set autovacuum_naptime = '" + naptime.replace("'", "''") + "'");
                statement.execute("select pg_reload_conf()");
            }
        });
    }

    /** Postgres was restarted: the watcher's connection is opened again on its next use, and the new server's CPU is read. */
    synchronized void postgresRestarted() {
        postmaster = postmasterProcess();
        try {
            if (watcher != null) {
                watcher.close();
            }
        } catch (java.sql.SQLException ignored) {
            // the server it was connected to is gone
        }
        watcher = null;
    }

    /** Redis's keys (DBSIZE) and memory in use (INFO memory's used_memory). */
    record RedisSize(long keys, long usedBytes) {}

    RedisSize redisSize() {
        try (var connection = redisClient.connect()) {
            long used = 0;
            for (String line : connection.sync().info("memory").split("\r?\n")) {
                if (line.startsWith("used_memory:")) {
                    used = Long.parseLong(line.substring("used_memory:".length()).trim());
                }
            }
            return new RedisSize(connection.sync().dbsize(), used);
        }
    }

    /**
     * Redis's keys by shape, a tenant's or integration's name in the hash tag replaced by {@code *}, with how many
     * of each carry a TTL (SCAN, then TTL of each).
     */
    Map<String, long[]> redisKeyShapes() {
        Map<String, long[]> shapes = new java.util.TreeMap<>();
        try (var connection = redisClient.connect()) {
            var commands = connection.sync();
            var cursor = io.lettuce.core.ScanCursor.INITIAL;
            do {
                var page = commands.scan(cursor, io.lettuce.core.ScanArgs.Builder.limit(1000));
                for (String key : page.getKeys()) {
                    String shape = key.replaceAll("\\{([a-z]):[^}]*}", "{$1:*}").replaceAll(":\\d{6,}", ":<n>");
                    long[] counts = shapes.computeIfAbsent(shape, k -> new long[2]);
                    counts[0]++;
                    if (commands.ttl(key) >= 0) {
                        counts[1]++;
                    }
                }
                cursor = page;
            } while (!cursor.isFinished());
        }
        return shapes;
    }

    /** The WAL written so far, everyone's (the benchmark's own reads write none). */
    private synchronized PgWal postgresWal() {
        scalar("select 1", null, null); // opens the watcher connection
        try (var statement = watcher.prepareStatement(
                "select (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint, wal_records, wal_fpi from pg_stat_wal");
             var rows = statement.executeQuery()) {
            rows.next();
            return new PgWal(rows.getLong(1), rows.getLong(2), rows.getLong(3));
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Commands the Redis server executed, those inside scripts included (INFO commandstats). */
    private long redisServerCommands() {
        try (var connection = redisClient.connect()) {
            long total = 0;
            for (String line : connection.sync().info("commandstats").split("\r?\n")) {
                int calls = line.indexOf("calls=");
                if (line.startsWith("cmdstat_") && calls > 0 && !line.startsWith("cmdstat_info")) {
                    total += Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
                }
            }
            return total;
        }
    }

    /** Admission deferrals the guard counted in Redis (per-minute hashes, every reason, source reservations included). */
    long deferralsCounted() {
        try (var connection = redisClient.connect()) {
            long total = 0;
            for (String key : connection.sync().keys("*:deferrals:*")) {
                for (String count : connection.sync().hgetall(key).values()) {
                    total += Long.parseLong(count);
                }
            }
            return total;
        }
    }

    /** The JVM's peak resident set (the embedded Redis and Postgres are processes of their own). */
    static long peakRssMb() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
                }
            }
        } catch (java.io.IOException ignored) {
            // not Linux: no figure
        }
        return -1;
    }

    @Override
    public void close() {
        try {
            if (watcher != null) {
                watcher.close();
            }
        } catch (java.sql.SQLException ignored) {
            // closing anyway
        }
        redisClient.shutdown();
        handlers.close();
        runtime.close();
    }
}
