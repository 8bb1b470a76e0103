package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;
import dev.runner.local.faults.FaultRun;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Runner's benchmarks (bench/README.md): each workload on a fresh local runtime, wired from
 * template.yaml as in AWS, against a handler service that answers at once unless the workload says
 * otherwise. Prints figures, with what an item cost (CPU per function, invocations, the AWS bill:
 * {@link CostReport}); asserts nothing. Sizes and limits are system properties so a run can be
 * scaled (and says so); {@code -Dbench.jfr=DIR} records a JFR profile of each workload's measured
 * window into {@code DIR/<workload>.jfr}.
 *
 * <pre>java -XX:TieredStopAtLevel=1 -jar bench/target/runner-bench.jar [w1] [w2] [w3] [w4] [w5] [w6] [w7] [w8] [w9] [w10] [w13] [faults]</pre>
 *
 * {@code faults} is the fault run of the tests ({@code FaultRunIT}), not a benchmark: it is not run by default.
 */
public final class Bench {

    /** BENCH.md's W1 items/s of the reference: its latest run, and the low end of the first two. */
    static final double REFERENCE_W1_BEST = 2593;
    static final double REFERENCE_W1_LOWEST = 1650;
    /** BENCH.md: the reference worker's CPU per item at W1. */
    static final double REFERENCE_WORKER_CPU_MS = 0.26;
    /** Issue 33: the item worker's CPU per W1 item, all threads, and the run worker's per fetched item. */
    static final double WORKER_CPU_GOAL_MS = 0.15;

    private Bench() {}

    public static void main(String[] args) {
        Set<String> workloads = new LinkedHashSet<>(args.length == 0 ? List.of("w1", "w2", "w3", "w4", "w5", "w6", "w7") : Arrays.asList(args));
        System.out.println(jitMode());
        System.out.println(BenchStack.pgDurable()
                ? "Postgres: durable (fsync, synchronous_commit and full-page writes on, as on RDS)"
                : "Postgres: not durable (fsync and synchronous_commit off; RUNNER_PG_DURABLE=false or -Dbench.pgDurable=false)");
        warmUp();
        for (String workload : workloads) {
            switch (workload) {
                case "w1" -> throughput();
                case "w2" -> priority();
                case "w3" -> fairness();
                case "w4" -> outage();
                case "w5" -> limitedDrain();
                case "w6" -> rateDrain();
                case "w7" -> IsolationBench.isolation();
                case "w7a" -> IsolationBench.ownBacklog();
                case "w7b" -> IsolationBench.failingNeighbour();
                case "w11" -> FlowBench.adaptive();
                case "w11a" -> FlowBench.partnerAtOnce();
                case "w11b" -> FlowBench.partnerPerTenant();
                case "w12" -> FlowBench.weightedShare();
                case "w8" -> soak();
                case "w9" -> TenantScaleBench.tenants();
                case "w10" -> WebhookStormBench.storm();
                case "w13" -> RecordBurstBench.bursts();
                case "faults" -> faults();
                default -> throw new IllegalArgumentException("unknown workload " + workload
                        + " (w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, faults)");
            }
        }
        System.exit(0);
    }

    /**
     * Which JIT this JVM runs, said first: the functions run C1 only in Lambda (the template's
     * JAVA_TOOL_OPTIONS) and in {@code local/run}; under the JVM's default (C1 then C2) a workload
     * of seconds spends much of its CPU compiling, and its figures are not the deployed code's.
     */
    static String jitMode() {
        var hotspot = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
        String level = hotspot.getVMOption("TieredStopAtLevel").getValue();
        return "1".equals(level)
                ? "JIT: C1 only (-XX:TieredStopAtLevel=1), as the functions run in Lambda (the template's JAVA_TOOL_OPTIONS) and in local/run"
                : "JIT: the JVM's default (C1, then C2; TieredStopAtLevel=" + level + "). Lambda and local/run run the functions C1 only:"
                        + " add -XX:TieredStopAtLevel=1 to measure as they do (README, Benchmarks)";
    }

    /**
     * The JIT compiles the hot paths before anything is measured (-Dbench.warmup items, 0 = none):
     * a W1 of its own, not reported. Every workload then runs on its own fresh local runtime.
     */
    static void warmUp() {
        int items = Integer.getInteger("bench.warmup", 4000);
        if (items <= 0) {
            return;
        }
        long start = System.nanoTime();
        try (var stack = new BenchStack(Map.of())) {
            List<String> tenants = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                tenants.add("warm-" + t);
            }
            stack.integration("warm", "import", true, Json.object().put("batch_size", 10).put("concurrency", 50)
                    .put("rate_limit_per_minute", 600_000), tenants, "warm-secret-0123456789");
            stack.handlers.handler("import").pages(1, items / tenants.size());
            List<UUID> runs = new ArrayList<>();
            for (String tenant : tenants) {
                runs.add(stack.manualRun(tenant, "warm", "import"));
            }
            stack.awaitEnded(runs, Duration.ofMinutes(10));
        }
        System.out.printf("%nwarm-up: %d items in %.1f s (not measured; -Dbench.warmup=0 to skip)%n", items, (System.nanoTime() - start) / 1e9);
    }

    /**
     * W1: 20,000 items over 40 tenants (a run of 500 each, one page), /process-batch, the handler
     * configured as the reference's (concurrency 50, 600,000 a minute, batches of 10);
     * {@code -Dw1.reference=false} gives it no limits (batches of 10 only), as earlier runs had it.
     */
    static void throughput() {
        int tenants = Integer.getInteger("w1.tenants", 40);
        int perTenant = Integer.getInteger("w1.items", 500);
        boolean reference = Boolean.parseBoolean(System.getProperty("w1.reference", "true"));
        try (var stack = new BenchStack(Map.of())) {
            List<String> tenantIds = new ArrayList<>();
            for (int t = 0; t < tenants; t++) {
                tenantIds.add("w1-tenant-" + t);
            }
            var configs = Json.object().put("batch_size", 10);
            if (reference) {
                configs.put("concurrency", 50).put("rate_limit_per_minute", 600_000);
            }
            stack.integration("w1", "import", true, configs, tenantIds, "w1-secret-0123456789");
            stack.handlers.handler("import").pages(1, perTenant);
            var window = Window.open("w1", stack);
            List<UUID> runs = stack.manualRuns(tenantIds, "w1", "import");
            Instant ended = stack.awaitEnded(runs, Duration.ofMinutes(10));
            var used = window.close();
            double seconds = window.secondsUntil(ended);
            int items = tenants * perTenant;
            long succeeded = runs.stream().mapToLong(r -> stack.count(r, "succeeded")).sum();
            System.out.printf("%nW1 throughput: %d items (%d tenants x %d), handler %s: %d succeeded in %.1f s = %.0f items/s%n",
                    items, tenants, perTenant, reference ? "as the reference's (concurrency 50, 600,000/min, batches of 10)"
                            : "without limits (batches of 10)", succeeded, seconds, items / seconds);
            System.out.printf("  = %.2fx the reference's best, %.0f items/s, and %.2fx its lowest, %.0f (BENCH.md: BullMQ on a 2-core machine like this)%n",
                    items / seconds / REFERENCE_W1_BEST, REFERENCE_W1_BEST, items / seconds / REFERENCE_W1_LOWEST, REFERENCE_W1_LOWEST);
            System.out.printf("  Redis: %.3f commands/item sent, %.3f round trips/item, %.2f commands/item server-side (inside scripts too)%n",
                    (double) used.redisClientCommands() / items, (double) used.redisRoundTrips() / items, (double) used.redisCommands() / items);
            System.out.printf("  Postgres: %.3f statements/item at the server (%.3f with BEGIN/COMMIT; %.2f per 10-item batch); %.3f/item sent by the functions%n",
                    (double) used.postgres().work() / items, (double) used.postgres().all() / items, used.postgres().work() * 10.0 / items,
                    (double) used.postgresStatements() / items);
            System.out.printf("  SQS: %.3f requests/item %s%n", (double) used.sqsTotal() / items, used.sqsByOperation());
            System.out.printf("  Postgres WAL: %.0f bytes/item, %.2f records/item, %.3f full-page images/item (pg_stat_wal, the insert position)%n",
                    (double) used.wal().bytes() / items, (double) used.wal().records() / items, (double) used.wal().fullPageImages() / items);
            System.out.printf("  handler calls: %d; JVM peak RSS %d MB%n", stack.handlers.calls("import").size(), BenchStack.peakRssMb());
            CostReport.print(items, used);
            if (Integer.getInteger("bench.pgTop", 0) > 0) {
                System.out.print(stack.topStatements(Integer.getInteger("bench.pgTop")));
            }
            var itemWorker = used.invocations().functions().get("ItemWorkerFunction");
            if (itemWorker != null) {
                System.out.printf("  item worker CPU %.4f ms/item (all threads, %d samples alone); goal <= %.2f (0.6x the reference worker's %.2f)%n",
                        itemWorker.cpuNanos() / 1e6 / items, itemWorker.samples(), WORKER_CPU_GOAL_MS, REFERENCE_WORKER_CPU_MS);
            }
            var runWorker = used.invocations().functions().get("RunWorkerFunction");
            if (runWorker != null) {
                System.out.printf("  run worker CPU %.4f ms per fetched item (all threads, %d samples alone%s); goal <= %.2f%n",
                        runWorker.cpuNanos() / 1e6 / items, runWorker.samples(),
                        runWorker.samples() < 3 ? ": too few for the ratio, see -Dbench.aloneAlways=RunWorkerFunction" : "", WORKER_CPU_GOAL_MS);
            }
        }
    }

    /**
     * W8, the soak: {@code -Dw8.items} (1,000,000) items through W1's setup in rounds of {@code -Dw8.round} (100,000), with
     * retention compressed ({@code -Dw8.retainRuns}, PT30S, shorter than a round, so each round's runs pass it while
     * the next round runs and the table reaches the size retention holds it at within a few rounds; dead items twice
     * that; a scheduler tick every 10 s; no tenant limit; autovacuum every {@code -Dw8.naptime}, 5s, as Aurora runs it). Per round: items/s, the claim's and
     * the record's time per statement (one per batch of 20) as Postgres ran them (its statement log: mean and p99;
     * pg_stat_statements' mean beside it as a check), the item table's size on disk (indexes included), WAL per item,
     * what vacuum saw, Postgres's CPU per item and the machine's load. Flat: the last round within 15 % of the first on
     * each.
     * <p>
     * The measured rounds start at the steady state, not from an empty table: first {@code -Dw8.warmup} items (in whole
     * rounds; three rounds by default) run through the same setup, printed as warm-up rows and counted in nothing. From
     * the second round on the table holds the previous round's finished items until they pass retention and a tick
     * deletes them, up to two rounds' items and the space vacuum frees between them, and its heap and indexes grow to
     * that over the first rounds: by the third round when items flow fast, by the fourth only when the machine is slow
     * (bench/README.md, W8). Three warm-up rounds make the first measured round the fourth in either case.
     */
    static void soak() {
        int total = Integer.getInteger("w8.items", 1_000_000);
        int round = Integer.getInteger("w8.round", 100_000);
        int warmupRounds = Math.ceilDiv(Integer.getInteger("w8.warmup", 3 * round), round);
        int tenants = 40;
        String retainRuns = System.getProperty("w8.retainRuns", "PT30S");
        Map<String, String> env = Map.of("RUNNER_RETAIN_RUNS", retainRuns,
                "RUNNER_RETAIN_DEAD", Duration.parse(retainRuns).multipliedBy(2).toString(), "RUNNER_SCHEDULE_TICK_MS", "10000",
                // Rounds follow each other at once: the tenant limit's default (1,000 a minute) would make the soak a drain.
                "RUNNER_TENANT_LIMIT_PER_MINUTE", "100000000");
        // Autovacuum as Aurora PostgreSQL runs it by default (the embedded server's default is a minute: see bench/README.md, W8).
        String naptime = System.getProperty("w8.naptime", "5s");
        // The item worker's calls of the functions that hold the claim and the record (V11__hot_statements.sql).
        String claimPattern = "%from runner_claim_items(%";
        String recordPattern = "select runner_record_results(%";
        try (var stack = new BenchStack(env);
             var statementLog = StatementLog.start(stack, "runner_item_worker", Map.of("claim", claimPattern, "record", recordPattern))) {
            stack.autovacuumNaptime(naptime);
            List<String> tenantIds = new ArrayList<>();
            for (int t = 0; t < tenants; t++) {
                tenantIds.add("w8-tenant-" + t);
            }
            stack.integration("w8", "import", true, Json.object().put("batch_size", 10).put("concurrency", 50)
                    .put("rate_limit_per_minute", 600_000), tenantIds, "w8-secret-0123456789");
            int perRun = round / tenants;
            // The run worker refuses pages of over 1,000 items: a run's items come in pages of 500, as W2's do.
            int pageSize = Math.min(500, perRun);
            stack.handlers.handler("import").pages(perRun / pageSize, pageSize);
            System.out.printf("%nW8 soak: %,d items in rounds of %,d (%d runs of %,d), retention %s, autovacuum_naptime %s; claim and record"
                    + " times per statement as Postgres ran them (its log, runner_item_worker's statements), pg_stat_statements' mean beside;"
                    + " after a warm-up of %,d items (%d round%s, not counted)%n",
                    total, round, tenants, perRun, retainRuns, naptime, warmupRounds * round, warmupRounds, warmupRounds == 1 ? "" : "s");
            System.out.println("  items so far | items/s | claim ms mean / p99 / max (n) | record ms mean / p99 / max (n) | pgss claim / record mean"
                    + " | execution_items MB (indexes) | WAL bytes/item | rows live / dead, autovacuums | runs | Postgres CPU ms/item | load");
            List<double[]> rounds = new ArrayList<>();
            statementLog.drain(); // the setup's statements
            // Warm-up rounds first (done below 0), measured rounds from 0: every meter below is reset or read afresh each round.
            for (int done = -warmupRounds * round; done < total; done += round) {
                boolean warmup = done < 0;
                stack.resetStatementStatistics();
                var window = Window.open("w8", stack);
                List<UUID> runs = stack.manualRuns(tenantIds, "w8", "import");
                Instant ended = stack.awaitEnded(runs, Duration.ofMinutes(30));
                var used = window.close();
                var logged = statementLog.drain();
                StatementLog.Times claim = logged.get("claim");
                StatementLog.Times record = logged.get("record");
                BenchStack.StatementTimes claimStats = stack.statementTimes(claimPattern);
                BenchStack.StatementTimes recordStats = stack.statementTimes(recordPattern);
                BenchStack.TableState table = stack.itemTableState();
                double[] figures = {round / window.secondsUntil(ended), claim.mean(), claim.percentile(99), record.mean(), record.percentile(99),
                        stack.itemTableBytes() / 1e6, (double) used.wal().bytes() / round};
                if (!warmup) {
                    rounds.add(figures);
                }
                String label = warmup ? String.format("warm-up %,d", done + warmupRounds * round + round) : String.format("%,d", done + round);
                // Postgres's CPU per item moves less with what else the machine runs than items/s and the times do.
                System.out.printf("  %15s | %7.0f | %5.2f / %6.2f / %6.1f (%,d) | %5.2f / %6.2f / %6.1f (%,d) | %5.2f / %5.2f | %8.1f (%.1f) | %6.0f"
                                + " | %,d / %,d, %d | %,d | %.3f | %s%n", label, figures[0], figures[1], figures[2], claim.longest(), claim.count(),
                        figures[3], figures[4], record.longest(), record.count(), claimStats.mean(), recordStats.mean(), figures[5],
                        stack.itemIndexBytes() / 1e6, figures[6], table.live(), table.dead(), table.autovacuums(), stack.runCount(),
                        CostReport.prefixed(used.cpu().byProcess(), "postgres") / 1e6 / round, loadAverage());
            }
            String[] names = {"items/s", "claim mean", "claim p99", "record mean", "record p99", "execution_items MB", "WAL bytes/item"};
            double[] first = rounds.getFirst();
            double[] last = rounds.getLast();
            StringBuilder verdict = new StringBuilder("  last round / first:");
            boolean flat = true;
            for (int i = 0; i < names.length; i++) {
                double ratio = last[i] / first[i];
                boolean within = Math.abs(ratio - 1) <= 0.15;
                flat &= within;
                verdict.append(String.format(" %s %.2f%s;", names[i], ratio, within ? "" : " (drifts)"));
            }
            System.out.println(verdict);
            // The first round starts from an empty table; the spread over the second half says whether the steady state holds.
            StringBuilder spread = new StringBuilder("  second half of the rounds, highest / lowest:");
            List<double[]> secondHalf = rounds.subList(rounds.size() / 2, rounds.size());
            for (int i = 0; i < names.length; i++) {
                int figure = i;
                double high = secondHalf.stream().mapToDouble(r -> r[figure]).max().orElse(Double.NaN);
                double low = secondHalf.stream().mapToDouble(r -> r[figure]).min().orElse(Double.NaN);
                spread.append(String.format(" %s %.2f;", names[i], high / low));
            }
            System.out.println(spread);
            System.out.printf("  %s (each within 15 %% of the first round); the statement log took %.0f MB%n", flat ? "flat" : "NOT flat",
                    statementLog.bytes() / 1e6);
        }
    }

    /** The machine's load average over the last minute (other work on it moves every time measured). */
    static String loadAverage() {
        try {
            return java.nio.file.Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    /** W2: a 20,000-item schedule backlog, then webhooks at 20/s; webhook latency with the backlog over without. */
    static void priority() {
        int backlog = Integer.getInteger("w2.backlog", 20_000);
        int webhooks = Integer.getInteger("w2.webhooks", 200);
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"))) {
            String secret = "w2-secret-0123456789";
            stack.integration("w2", "sync", true, Json.object().put("batch_size", 10), List.of("w2-tenant"), secret);
            stack.handlers.handler("sync").pages(backlog / 500, 500);
            webhookLatencies(stack, secret, webhooks / 2, "warm-up"); // class loading and JIT, not measured
            double[] alone = webhookLatencies(stack, secret, webhooks, "alone");
            var window = Window.open("w2", stack);
            stack.call("PUT", "/tenants/w2-tenant/integrations/w2", scheduleBody(secret), 200);
            // Fire the schedule now rather than in a minute: the scheduler's own tick (every second here) picks it up.
            try (var db = java.sql.DriverManager.getConnection(stack.runtime.endpoints().jdbcUrl(),
                    stack.runtime.endpoints().dbUser(), stack.runtime.endpoints().dbPassword())) {
                db.createStatement().executeUpdate("update schedules set next_fire_at = now() where tenant_id = 'w2-tenant'");
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (stack.scheduleItems("succeeded") < 1000 && System.nanoTime() < deadline) {
                LockSupport.parkNanos(50_000_000);
            }
            double[] withBacklog = webhookLatencies(stack, secret, webhooks, "with");
            var used = window.close();
            long waiting = stack.scheduleItems("queued");
            long processed = stack.scheduleItems("succeeded") + webhooks;
            System.out.printf("%nW2 priority: %d webhook items at 20/s, latency accepted -> handler%n", webhooks);
            System.out.printf("  alone:        p50 %.0f ms, p95 %.0f ms, p99 %.0f ms%n", alone[0], alone[1], alone[2]);
            System.out.printf("  with backlog: p50 %.0f ms, p95 %.0f ms, p99 %.0f ms (backlog of %d schedule items, %d still queued after the webhooks)%n",
                    withBacklog[0], withBacklog[1], withBacklog[2], backlog, waiting);
            System.out.printf("  ratio: p50 %.2f, p99 %.2f%n", withBacklog[0] / alone[0], withBacklog[2] / alone[2]);
            // Where the time went: until the item worker claimed the item (send, tier, poller, admission), then the call.
            List<Double> claimAlone = stack.webhookClaimDelays("hook-alone-");
            List<Double> claimWith = stack.webhookClaimDelays("hook-with-");
            System.out.printf("  accepted -> claimed (Postgres's clock): alone p50 %.0f ms, p99 %.0f ms; with backlog p50 %.0f ms, p99 %.0f ms%n",
                    percentile(claimAlone, 50), percentile(claimAlone, 99), percentile(claimWith, 50), percentile(claimWith, 99));
            System.out.printf("  cost over the window from the schedule's firing to the last webhook item: %d items succeeded in %.1f s%n",
                    processed, used.nanoTime() / 1e9);
            CostReport.print((int) processed, used);
        }
    }

    private static JsonNode scheduleBody(String secret) {
        var body = Json.object().put("enabled", true).put("webhookSecret", secret);
        body.putObject("schedules").put("sync", "rate(1 day)");
        return body;
    }

    /** p50, p95, p99 in ms from a webhook's 202 to the handler receiving its item. */
    private static double[] webhookLatencies(BenchStack stack, String secret, int count, String label) {
        return webhookLatencies(stack, secret, count, label, "w2-tenant", "w2", "sync");
    }

    /** The same for the webhooks of one tenant's integration and handler. */
    static double[] webhookLatencies(BenchStack stack, String secret, int count, String label,
                                     String tenant, String integrationKey, String handlerKey) {
        List<Double> latencies = new ArrayList<>(webhookLatenciesInOrder(stack, secret, count, label, tenant, integrationKey, handlerKey));
        latencies.removeIf(latency -> latency.isNaN());
        latencies.sort(Double::compare);
        return new double[] {percentile(latencies, 50), percentile(latencies, 95), percentile(latencies, 99)};
    }

    /**
     * Each webhook's latency in ms from its 202 to the handler receiving its item, in the order they were sent (NaN for
     * one the handler had not received two minutes after the last was sent).
     */
    static List<Double> webhookLatenciesInOrder(BenchStack stack, String secret, int count, String label,
                                               String tenant, String integrationKey, String handlerKey) {
        Map<String, Long> acceptedAt = new java.util.concurrent.ConcurrentHashMap<>();
        long interval = 50_000_000;
        long next = System.nanoTime();
        for (int i = 0; i < count; i++) {
            String externalId = "hook-" + label + "-" + i;
            byte[] body = ("{\"externalId\":\"" + externalId + "\"}").getBytes(StandardCharsets.UTF_8);
            long ts = Instant.now().getEpochSecond();
            Map<String, String> headers = new java.util.HashMap<>(StandardWebhooks.headers(List.of(secret), "msg_" + label + "_" + i, ts, body));
            headers.put("Content-Type", "application/json");
            int status = stack.post("/webhooks/" + tenant + "/" + integrationKey + "/" + handlerKey, body, headers);
            if (status != 202) {
                throw new IllegalStateException("webhook answered " + status);
            }
            acceptedAt.put(externalId, System.nanoTime());
            next += interval;
            LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
        }
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        Map<String, Double> latencies = new java.util.HashMap<>();
        while (System.nanoTime() < deadline) {
            latencies.clear();
            for (FakeHandler.Call call : stack.handlers.itemCalls(handlerKey)) {
                for (JsonNode item : FakeHandler.items(call)) {
                    String externalId = item.path("externalId").asText();
                    Long accepted = acceptedAt.get(externalId);
                    if (accepted != null) {
                        latencies.putIfAbsent(externalId, (call.receivedAtNanos() - accepted) / 1e6);
                    }
                }
            }
            if (latencies.size() >= count) {
                break;
            }
            LockSupport.parkNanos(50_000_000);
        }
        List<Double> inOrder = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            inOrder.add(latencies.getOrDefault("hook-" + label + "-" + i, Double.NaN));
        }
        return inOrder;
    }

    static double percentile(List<Double> sorted, int p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    /** W3: tenant A 20,000 items throttled at the tenant limit; tenant B 200 items alone and beside A. */
    static void fairness() {
        int limit = Integer.getInteger("w3.limit", 1000);
        int bigItems = Integer.getInteger("w3.items", 20_000);
        boolean untilDone = Boolean.parseBoolean(System.getProperty("w3.untilDone", "true"));
        try (var stack = new BenchStack(Map.of("RUNNER_TENANT_LIMIT_PER_MINUTE", Integer.toString(limit)))) {
            stack.integration("w3", "big", true, Json.object().put("batch_size", 10), List.of("tenant-a"), "w3-secret-0123456789");
            stack.integration("w3b", "small", true, Json.object().put("batch_size", 10), List.of("tenant-b"), "w3-secret-0123456789");
            stack.handlers.handler("big").pages(bigItems / 500, 500);
            stack.handlers.handler("small").pages(4, 50);
            stack.awaitEnded(List.of(stack.manualRun("tenant-b", "w3b", "small")), Duration.ofMinutes(2)); // warm-up
            // B's drain is a couple of seconds, so one sample is at the mercy of the machine: the median of w3.samples.
            int samples = Integer.getInteger("w3.samples", 3);
            long aloneNanos = System.nanoTime();
            List<Long> aloneRuns = timedRuns(stack, samples);
            long alone = median(aloneRuns);
            String aloneTimeline = timeline(stack, "small", aloneNanos, aloneRuns.getFirst());
            var window = Window.open("w3", stack);
            var before = window.before();
            long start = System.nanoTime();
            UUID big = stack.manualRun("tenant-a", "w3", "big");
            // As a user tries it: B's run a few seconds after A's, while A's items are fanned out and its first minute runs.
            LockSupport.parkNanos(Duration.ofMillis(Long.getLong("w3.gapMs", 3000)).toNanos());
            var beforeEarlyB = stack.meters();
            long earlyBNanos = System.nanoTime();
            long besideStart = timed(stack, "tenant-b", "w3b", "small");
            var usedByEarlyB = stack.meters().since(beforeEarlyB);
            String earlyBTimeline = timeline(stack, "small", earlyBNanos, besideStart);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while ((stack.count(big, "succeeded") < Math.min(limit, bigItems)
                    || !stack.run(big).path("status").asText().equals("running")) && System.nanoTime() < deadline) {
                LockSupport.parkNanos(100_000_000);
            }
            var beforeB = stack.meters();
            long besideNanos = System.nanoTime();
            List<Long> besideRuns = timedRuns(stack, samples);
            long beside = median(besideRuns);
            var usedByB = stack.meters().since(beforeB);
            String besideTimeline = timeline(stack, "small", besideNanos, besideRuns.getFirst());
            System.out.printf("%nW3 fairness: tenant limit %d/min; A %d items, B 200 items (B's times: the median of %d runs)%n",
                    limit, bigItems, samples);
            System.out.printf("  B alone %d ms %s; B %d ms after A's start %d ms: %.2fx; B beside throttled A %d ms %s: %.2fx (A had %d succeeded)%n",
                    alone, aloneRuns, Long.getLong("w3.gapMs", 3000), besideStart, (double) besideStart / alone, beside, besideRuns,
                    (double) beside / alone, stack.run(big).path("counts").path("succeeded").asInt());
            System.out.printf("  where B's time went in its first run (ms from its POST /runs): alone %s; after A's start %s; beside throttled A %s%n",
                    aloneTimeline, earlyBTimeline, besideTimeline);
            if (untilDone) {
                stack.awaitEnded(List.of(big), Duration.ofMinutes(bigItems / limit + 10));
                // B's own requests are taken out: what is left is A's.
                var all = window.close();
                var used = all.minus(usedByB).minus(usedByEarlyB);
                System.out.printf("  A's whole throttled life: %.1f min, %.2f SQS requests per A item %s%n",
                        (System.nanoTime() - start) / 6e10, (double) used.sqsTotal() / bigItems, used.sqsByOperation());
                CostReport.print(bigItems + 200, all);
            } else {
                var used = window.close();
                System.out.printf("  A so far: %d SQS requests for %d items %s (w3.untilDone=false)%n",
                        used.sqsTotal(), bigItems, used.sqsByOperation());
            }
        }
    }

    /** When a handler's pages were fetched and its items called in the {@code forMs} from {@code fromNanos}. */
    private static String timeline(BenchStack stack, String handler, long fromNanos, long forMs) {
        long toNanos = fromNanos + forMs * 1_000_000;
        List<FakeHandler.Call> calls = stack.handlers.calls(handler).stream()
                .filter(c -> c.receivedAtNanos() >= fromNanos && c.receivedAtNanos() <= toNanos).toList();
        java.util.function.Function<java.util.function.Predicate<FakeHandler.Call>, String> span = which -> {
            var at = calls.stream().filter(which).mapToLong(c -> (c.receivedAtNanos() - fromNanos) / 1_000_000).summaryStatistics();
            return at.getCount() == 0 ? "none" : at.getMin() + "-" + at.getMax();
        };
        return "pages fetched " + span.apply(c -> c.operation().equals("fetch")) + ", items called "
                + span.apply(c -> !c.operation().equals("fetch"));
    }

    /** W3's tenant B: its 200-item run {@code samples} times, one after another; each run's time in ms. */
    private static List<Long> timedRuns(BenchStack stack, int samples) {
        List<Long> times = new ArrayList<>();
        for (int i = 0; i < samples; i++) {
            times.add(timed(stack, "tenant-b", "w3b", "small"));
        }
        return times;
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static long timed(BenchStack stack, String tenant, String integration, String handler) {
        Instant start = Instant.now();
        return Duration.between(start, stack.awaitEnded(List.of(stack.manualRun(tenant, integration, handler)), Duration.ofMinutes(2))).toMillis();
    }

    /** W4: 2,000 items whose handler fails every call for 10 s, seed timings. */
    static void outage() {
        int items = Integer.getInteger("w4.items", 2000);
        long outageMs = Long.getLong("w4.outageMs", 10_000);
        try (var stack = new BenchStack(Map.of())) {
            stack.integration("w4", "push", true, Json.object().put("batch_size", 10), List.of("w4-tenant"), "w4-secret-0123456789");
            AtomicInteger duringOutage = new AtomicInteger();
            long[] outageEnds = {Long.MAX_VALUE};
            List<Long> failedAtNanos = new java.util.concurrent.CopyOnWriteArrayList<>();
            stack.handlers.handler("push").pages(items / 500, 500).batchStatus(() -> {
                if (System.currentTimeMillis() < outageEnds[0]) {
                    duringOutage.incrementAndGet();
                    failedAtNanos.add(System.nanoTime());
                    return 503;
                }
                return 200;
            });
            var window = Window.open("w4", stack);
            outageEnds[0] = System.currentTimeMillis() + outageMs;
            UUID run = stack.manualRun("w4-tenant", "w4", "push");
            Instant ended = stack.awaitEnded(List.of(run), Duration.ofMinutes(10));
            var used = window.close();
            JsonNode counts = stack.run(run).path("counts");
            long lost = items - counts.path("succeeded").asLong() - counts.path("dead").asLong();
            System.out.printf("%nW4 outage: %d items, handler down %d s, seed timings (5 failures, open 30 s, 3 attempts, 5 s backoff)%n",
                    items, outageMs / 1000);
            System.out.printf("  calls during the outage %d, dead %d, lost %d, succeeded %d, total %.1f s%n",
                    duringOutage.get(), counts.path("dead").asLong(), lost, counts.path("succeeded").asLong(),
                    window.secondsUntil(ended));
            if (!failedAtNanos.isEmpty()) {
                // When they came: a burst at the start is the calls in flight before any failure reached the breaker.
                long first = failedAtNanos.stream().mapToLong(Long::longValue).min().orElseThrow();
                System.out.printf("  the outage's calls at ms after its first: %s%n", failedAtNanos.stream().sorted()
                        .map(at -> String.valueOf((at - first) / 1_000_000)).toList());
            }
            CostReport.print(items, used);
        }
    }

    /**
     * W5: 1,000 items over 40 tenants (manual runs), a handler with concurrency 4, no batch
     * endpoint, 20 ms per call. Ideal: every call at the limit, 1,000 x 20 ms / 4 = 5 s.
     */
    static void limitedDrain() {
        int tenants = Integer.getInteger("w5.tenants", 40);
        int items = Integer.getInteger("w5.items", 1000);
        int concurrency = Integer.getInteger("w5.concurrency", 4);
        long callMs = Long.getLong("w5.callMs", 20);
        double ideal = items * callMs / 1000.0 / concurrency;
        drain("W5 limited drain", "w5", tenants, items, Json.object().put("concurrency", concurrency), callMs, ideal,
                String.format("concurrency %d, no batch endpoint, %d ms per call", concurrency, callMs));
    }

    /**
     * W6: 1,200 items over 10 tenants, a handler limited to 600 a minute, no batch endpoint, 20 ms
     * per call. Ideal: 600 in the first minute's window, the rest when the second opens a minute
     * later, so about 60 s (plus the last 600 calls' own time, which overlap).
     */
    static void rateDrain() {
        int tenants = Integer.getInteger("w6.tenants", 10);
        int items = Integer.getInteger("w6.items", 1200);
        int perMinute = Integer.getInteger("w6.ratePerMinute", 600);
        long callMs = Long.getLong("w6.callMs", 20);
        double ideal = Math.max(0, Math.ceil((double) items / perMinute) - 1) * 60.0 + callMs / 1000.0;
        drain("W6 rate drain", "w6", tenants, items, Json.object().put("rate_limit_per_minute", perMinute), callMs, ideal,
                String.format("rate_limit_per_minute %d, no batch endpoint, %d ms per call", perMinute, callMs));
    }

    /** Manual runs of {@code items} items over {@code tenants} tenants through a limited handler answering in {@code callMs}. */
    private static void drain(String title, String key, int tenants, int items, com.fasterxml.jackson.databind.node.ObjectNode configs,
                              long callMs, double idealSeconds, String handler) {
        int perTenant = items / tenants;
        try (var stack = new BenchStack(Map.of())) {
            List<String> tenantIds = new ArrayList<>();
            for (int t = 0; t < tenants; t++) {
                tenantIds.add(key + "-tenant-" + t);
            }
            stack.integration(key, "sync", false, configs, tenantIds, key + "-secret-0123456789");
            stack.handlers.handler("sync").pages(1, perTenant).itemStatus(item -> {
                LockSupport.parkNanos(callMs * 1_000_000);
                return 200;
            });
            var window = Window.open(key, stack);
            List<UUID> runs = new ArrayList<>();
            for (String tenant : tenantIds) {
                runs.add(stack.manualRun(tenant, key, "sync"));
            }
            long runsStarted = System.nanoTime();
            Instant ended = stack.awaitEnded(runs, Duration.ofMinutes(15));
            var used = window.close();
            int total = perTenant * tenants;
            double seconds = window.secondsUntil(ended);
            long succeeded = runs.stream().mapToLong(r -> stack.count(r, "succeeded")).sum();
            long deferrals = used.deferrals();
            System.out.printf("%n%s: %d items (%d tenants x %d), handler %s%n", title, total, tenants, perTenant, handler);
            System.out.printf("  %d succeeded in %.1f s = %.2fx ideal (%.1f s); %.2f deferrals per item (%d re-sends to the item tiers;"
                            + " admission counted %d in Redis, source reservations included)%n",
                    succeeded, seconds, seconds / idealSeconds, idealSeconds, (double) deferrals / total, deferrals, stack.deferralsCounted());
            System.out.printf("  handler calls %d; SQS %.3f requests/item %s%n", stack.handlers.itemCalls("sync").size(),
                    (double) used.sqsTotal() / total, used.sqsByOperation());
            printTimeline(stack.handlers.itemCalls("sync"), window, runsStarted, callMs, configs.path("concurrency").asInt(0));
            CostReport.print(total, used);
        }
    }

    /**
     * Where a drain's time went: until the first handler call (runs started, items fetched and
     * enqueued), the calls' span, and how busy the handler's limit kept it over that span.
     */
    private static void printTimeline(List<FakeHandler.Call> calls, Window window, long runsStarted, long callMs, int concurrency) {
        if (calls.isEmpty()) {
            return;
        }
        long first = calls.stream().mapToLong(FakeHandler.Call::receivedAtNanos).min().orElseThrow();
        long last = calls.stream().mapToLong(FakeHandler.Call::receivedAtNanos).max().orElseThrow();
        double spanSeconds = (last - first) / 1e9 + callMs / 1000.0;
        String busy = concurrency > 0
                ? String.format("; calls in flight %.2f on average of the %d allowed (%.0f %%)", calls.size() * callMs / 1000.0 / spanSeconds,
                        concurrency, 100.0 * calls.size() * callMs / 1000.0 / spanSeconds / concurrency)
                : "";
        System.out.printf("  timeline: runs started (POST /runs, one after another) in %.2f s, first call %.2f s after the start,"
                        + " calls over %.2f s%s%n", window.secondsSinceOpenedAt(runsStarted), window.secondsSinceOpenedAt(first), spanSeconds, busy);
        if (Boolean.getBoolean("bench.buckets")) {
            long bucket = 250_000_000L;
            int[] counts = new int[(int) ((last - first) / bucket) + 1];
            calls.forEach(c -> counts[(int) ((c.receivedAtNanos() - first) / bucket)]++);
            StringBuilder line = new StringBuilder("  calls per 250 ms:");
            for (int count : counts) {
                line.append(' ').append(count);
            }
            System.out.println(line);
        }
    }

    /**
     * A workload's measured window: the meters at its start and, with {@code -Dbench.jfr=DIR}, a
     * JFR profile (settings "profile", or the file {@code -Dbench.jfc} names) of exactly that window.
     */
    static final class Window {
        private final String workload;
        private final BenchStack stack;
        private final BenchStack.Meters before;
        private final jdk.jfr.Recording recording;
        private final Instant opened = Instant.now();
        private final long openedNanos = System.nanoTime();

        private Window(String workload, BenchStack stack, BenchStack.Meters before, jdk.jfr.Recording recording) {
            this.workload = workload;
            this.stack = stack;
            this.before = before;
            this.recording = recording;
        }

        static Window open(String workload, BenchStack stack) {
            jdk.jfr.Recording recording = null;
            if (System.getProperty("bench.jfr") != null) {
                try {
                    // -Dbench.jfc=FILE: other settings (a shorter sampling period, say) than the JDK's "profile".
                    String settings = System.getProperty("bench.jfc");
                    recording = new jdk.jfr.Recording(settings == null ? jdk.jfr.Configuration.getConfiguration("profile")
                            : jdk.jfr.Configuration.create(java.nio.file.Path.of(settings)));
                    recording.start();
                } catch (java.io.IOException | java.text.ParseException e) {
                    throw new IllegalStateException("cannot start JFR: " + e.getMessage(), e);
                }
            }
            return new Window(workload, stack, stack.meters(), recording);
        }

        BenchStack.Meters before() {
            return before;
        }

        /** Seconds from the window's opening to {@code nanoTime} (System.nanoTime scale). */
        double secondsSinceOpenedAt(long nanoTime) {
            return (nanoTime - openedNanos) / 1e9;
        }

        /** Seconds from the window's opening to {@code end} (the last run's end, by Postgres's clock: the same machine's). */
        double secondsUntil(Instant end) {
            return Duration.between(opened, end).toNanos() / 1e9;
        }

        /** What the window used; the profile, if any, is written now. */
        BenchStack.Meters close() {
            var used = stack.meters().since(before);
            if (recording != null) {
                try {
                    java.nio.file.Path file = java.nio.file.Path.of(System.getProperty("bench.jfr"), workload + ".jfr");
                    java.nio.file.Files.createDirectories(file.getParent());
                    recording.stop();
                    recording.dump(file);
                    recording.close();
                    System.out.println("  profile: " + file);
                } catch (java.io.IOException e) {
                    throw new IllegalStateException("cannot write the JFR profile: " + e.getMessage(), e);
                }
            }
            return used;
        }
    }

    /** The fault run (issue 7): the same code and figures as FaultRunIT, on a plan whose tenant count can be scaled. */
    static void faults() {
        FaultRun.Plan plan = FaultRun.Plan.standard().withTenants(Integer.getInteger("faults.tenants", 24));
        System.out.printf("%n%s", FaultRun.run(Path.of("template.yaml"), plan, System.out).describe());
    }
}
