package dev.runner.bench;

import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.delivery.DeliveryStore;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.integration.Direction;
import dev.runner.item.ItemStore;
import dev.runner.store.Database;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What an event item's statements cost Postgres, apart from everything else W10 runs: on an embedded Postgres
 * committing durably (as Aurora does), one connection, {@code -Dcost.items} (5,000) one-item deliveries accepted one
 * by one, then claimed and recorded (each run completed by its record) in batches of {@code -Dcost.batch} (3), as the
 * webhook tier's batches come at W10. Prints Postgres's CPU (its processes', from /proc) and wall time per item for
 * each step.
 *
 * <pre>java -XX:TieredStopAtLevel=1 -cp bench/target/runner-bench.jar dev.runner.bench.IntakeStatementCost</pre>
 */
public final class IntakeStatementCost {

    private IntakeStatementCost() {}

    public static void main(String[] args) {
        int items = Integer.getInteger("cost.items", 5_000);
        int batch = Integer.getInteger("cost.batch", 3);
        boolean durable = Boolean.parseBoolean(System.getProperty("cost.durable", "true"));
        try (var servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree(), false, durable)) {
            var endpoints = servers.endpoints();
            var config = new RunnerConfig.Database(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
            Database.migrate(config);
            long postmaster = CpuMeter.postmaster(URI.create(endpoints.jdbcUrl().substring("jdbc:".length())).getPort());
            try (var db = Database.connect(config, 1, CostTracker.NONE)) {
                Clock clock = Clock.systemUTC();
                DeliveryStore deliveries = new DeliveryStore(db);
                ItemStore itemStore = new ItemStore(db, clock);
                // Warm: plans cached for the connection, the tables' first pages.
                long backend = db.query("select pg_backend_pid()", row -> row.getLong(1)).getFirst();
                run(deliveries, itemStore, clock, 500, batch, null, postmaster, backend);
                if (Boolean.getBoolean("cost.analyze")) {
                    db.update("analyze");
                }
                System.out.printf("Postgres %s, one connection, %,d one-item deliveries, batches of %d%n",
                        durable ? "durable (fsync, synchronous_commit, full_page_writes on)" : "throwaway (all three off)", items, batch);
                run(deliveries, itemStore, clock, items, batch, System.out, postmaster, backend);
            }
        }
    }

    private static void run(DeliveryStore deliveries, ItemStore items, Clock clock, int n, int batch, java.io.PrintStream out,
                            long postmaster, long backend) {
        List<UUID[]> made = new ArrayList<>();
        UUID previousOwed = null;
        long[] before = measure(postmaster, backend);
        for (int i = 0; i < n; i++) {
            UUID run = Ids.next(clock);
            UUID item = Ids.next(clock);
            UUID owed = Ids.next(clock);
            deliveries.accept(List.of(new DeliveryStore.Offered("cost-tenant-" + i % 1000, "cost", "msg_" + UUID.randomUUID(),
                            Duration.ofDays(1), run)), List.of(new DeliveryStore.NewRun(run, "orders", Direction.INBOUND, Trigger.WEBHOOK)),
                    List.of(new DeliveryStore.NewItem(item, 0, "e-" + i, "{\"externalId\":\"e-" + i + "\",\"n\":" + i + "}")), owed,
                    previousOwed == null ? List.of() : List.of(previousOwed));
            previousOwed = owed;
            made.add(new UUID[] {run, item});
        }
        long[] accepted = measure(postmaster, backend);
        for (int from = 0; from < made.size(); from += batch) {
            List<UUID[]> chunk = made.subList(from, Math.min(made.size(), from + batch));
            items.claim(chunk.stream().map(m -> m[1]).toList(), Duration.ofMinutes(2));
        }
        long[] claimed = measure(postmaster, backend);
        for (int from = 0; from < made.size(); from += batch) {
            List<UUID[]> chunk = made.subList(from, Math.min(made.size(), from + batch));
            List<ItemStore.Result> results = chunk.stream().<ItemStore.Result>map(m -> new ItemStore.Result.Succeeded(m[1])).toList();
            items.record(results, chunk.stream().map(m -> m[0]).toList());
        }
        long[] recorded = measure(postmaster, backend);
        if (out != null) {
            out.printf("  accept: %.3f ms Postgres CPU (its connection's backend %.3f), %.3f ms wall per item%n", cpu(before, accepted, n, 0),
                    cpu(before, accepted, n, 2), wall(before, accepted, n));
            out.printf("  claim:  %.3f ms Postgres CPU (backend %.3f), %.3f ms wall per item%n", cpu(accepted, claimed, n, 0),
                    cpu(accepted, claimed, n, 2), wall(accepted, claimed, n));
            out.printf("  record and complete: %.3f ms Postgres CPU (backend %.3f), %.3f ms wall per item%n", cpu(claimed, recorded, n, 0),
                    cpu(claimed, recorded, n, 2), wall(claimed, recorded, n));
            out.printf("  all: %.3f ms Postgres CPU (backend %.3f) per item%n", cpu(before, recorded, n, 0), cpu(before, recorded, n, 2));
        }
    }

    /** Postgres's CPU (all its processes), the wall clock, and the connection's backend's CPU, in nanoseconds. */
    private static long[] measure(long postmaster, long backend) {
        var reading = CpuMeter.read(postmaster);
        long postgres = reading.children().entrySet().stream()
                .filter(e -> "postgres".equals(reading.childNames().get(e.getKey()))).mapToLong(java.util.Map.Entry::getValue).sum();
        return new long[] {postgres, System.nanoTime(), reading.children().getOrDefault((int) backend, 0L)};
    }

    private static double cpu(long[] from, long[] to, int n, int which) {
        return (to[which] - from[which]) / 1e6 / n;
    }

    private static double wall(long[] from, long[] to, int n) {
        return (to[1] - from[1]) / 1e6 / n;
    }
}
