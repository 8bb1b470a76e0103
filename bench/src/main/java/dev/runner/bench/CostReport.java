package dev.runner.bench;

import dev.runner.local.lambda.InvocationMeter;

import java.util.Locale;
import java.util.Map;

/**
 * What one item cost in a workload, per function and in dollars: the printed half of the cost
 * figures (BENCH.md, "cost"). Everything comes from counts measured over the whole workload;
 * prices are AWS's list prices in us-east-1 (Lambda arm64, SQS standard, HTTP API, ElastiCache
 * Serverless for Valkey, Aurora Serverless v2 with RDS Proxy).
 */
final class CostReport {

    /** Lambda, arm64: per GB-second of billed duration, and per request. */
    static final double LAMBDA_GB_SECOND = 0.0000133334;
    static final double LAMBDA_REQUEST = 0.20 / 1e6;
    /** SQS standard queues: per request, a request being each 64 KiB of payload. */
    static final double SQS_REQUEST = 0.40 / 1e6;
    /** API Gateway HTTP API, per request (first 300 million a month). */
    static final double HTTP_API_REQUEST = 1.00 / 1e6;
    /** ElastiCache Serverless for Valkey: per ECPU, and per GB-hour stored with a 100 MB minimum. */
    static final double VALKEY_ECPU = 0.0023 / 1e6;
    static final double VALKEY_GB_HOUR = 0.084;
    /** Aurora Serverless v2 per ACU-hour, RDS Proxy per ACU-hour of the database behind it (8 ACU minimum). */
    static final double AURORA_ACU_HOUR = 0.12;
    static final double PROXY_ACU_HOUR = 0.015;
    /**
     * vCPU per ACU: AWS gives an ACU as "about 2 GiB of memory with corresponding CPU"; a db.r6g.large
     * (2 vCPU, 16 GiB) is 8 ACU, so an ACU is taken as a quarter of a vCPU.
     */
    static final double VCPU_PER_ACU = 0.25;
    static final double HOURS_PER_MONTH = 730;

    private CostReport() {}

    /** Prints the cost block of a workload of {@code items} items. */
    static void print(int items, BenchStack.Meters used) {
        CpuMeter.Used cpu = used.cpu();
        double perItem = 1e6 * items; // ns → ms per item
        System.out.printf(Locale.ROOT, "  per item at the servers, whole workload (%d items): Redis %.2f commands (INFO commandstats, inside"
                        + " scripts too), Postgres %.3f statements (pg_stat_statements, %.3f with BEGIN/COMMIT), SQS %.3f requests,"
                        + " %.3f deferrals%n", items, (double) used.redisCommands() / items, (double) used.postgres().work() / items,
                (double) used.postgres().all() / items, (double) used.sqsTotal() / items, (double) used.deferrals() / items);
        System.out.printf("  CPU per item, this machine (whole workload, %d items): JVM %.3f ms, Postgres %.3f ms, Redis %.3f ms%n",
                items, cpu.jvmNanos() / perItem, prefixed(cpu.byProcess(), "postgres") / perItem, prefixed(cpu.byProcess(), "redis") / perItem);
        cpu.byKind().entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(kind -> System.out.printf("      %-58s %.3f ms/item%n", kind.getKey(), kind.getValue() / perItem));

        InvocationMeter.Snapshot invocations = used.invocations();
        System.out.printf("  per function (CPU: exact on the invoking thread, scaled by the all-thread CPU of invocations sampled to run"
                + " alone, which held the others for %.1f s in all; billed duration from the samples' wall time where there are any):%n",
                invocations.aloneNanos() / 1e9);
        double lambdaGbSeconds = 0;
        long lambdaRequests = 0;
        long httpRequests = 0;
        for (InvocationMeter.FunctionCosts f : invocations.functions().values()) {
            if (f.invocations() == 0) {
                continue;
            }
            // Alone, an invocation's wall time is what it takes without this machine's other work: closer to Lambda's.
            double billedMillis = f.samples() > 0 ? (double) f.sampledBilledMillis() / f.samples() * f.invocations() : f.billedMillis();
            double gbSeconds = billedMillis / 1000.0 * f.memoryMb() / 1024.0;
            lambdaGbSeconds += gbSeconds;
            lambdaRequests += f.invocations();
            if (f.logicalId().equals("ApiFunction") || f.logicalId().equals("WebhookFunction")) {
                httpRequests += f.invocations();
            }
            System.out.printf(Locale.ROOT, "    %-20s %.4f invocations/item (%.1f records each), wall %.1f ms per invocation (%s),"
                            + " billed %.1f ms at %d MB; CPU %.4f ms/item ±%.4f (invoking thread %.4f, x%.2f from %d samples)%n",
                    f.logicalId(), (double) f.invocations() / items, (double) f.records() / f.invocations(),
                    f.wallNanos() / 1e6 / f.invocations(),
                    f.samples() > 0 ? String.format(Locale.ROOT, "%.1f ms alone", f.sampledWallNanos() / 1e6 / f.samples()) : "none alone",
                    billedMillis / f.invocations(), f.memoryMb(),
                    f.cpuNanos() / perItem, f.cpuStandardError() / perItem, f.callerCpuNanos() / perItem, f.cpuRatio(), f.samples());
            threadKinds(f);
        }

        double million = 1e6 / items;
        double lambda = (lambdaGbSeconds * LAMBDA_GB_SECOND + lambdaRequests * LAMBDA_REQUEST) * million;
        double sqs = used.sqsBilled() * SQS_REQUEST * million;
        double api = httpRequests * HTTP_API_REQUEST * million;
        // ECPU: one per simple command moving under 1 KiB; the commands inside scripts are counted one each (a lower bound for scripts).
        double valkey = used.redisCommands() * VALKEY_ECPU * million;
        double postgresCpuSeconds = prefixed(cpu.byProcess(), "postgres") / 1e9;
        double acuHours = postgresCpuSeconds / VCPU_PER_ACU / 3600;
        double aurora = acuHours * (AURORA_ACU_HOUR + PROXY_ACU_HOUR) * million;
        System.out.printf(Locale.ROOT, "  AWS bill per million items (us-east-1 list prices): $%.2f%n", lambda + sqs + api + valkey + aurora);
        System.out.printf(Locale.ROOT, "    Lambda $%.2f: %.0f GB-s (billed duration x memory) + %.0f invocations%n",
                lambda, lambdaGbSeconds * million, lambdaRequests * million);
        System.out.printf(Locale.ROOT, "    SQS $%.2f: %.0f requests in 64 KiB chunks (%.3f per item; the functions' and the event source mappings')%n",
                sqs, used.sqsBilled() * million, (double) used.sqsBilled() / items);
        if (api > 0) {
            System.out.printf(Locale.ROOT, "    HTTP API $%.2f: %.0f requests%n", api, httpRequests * million);
        }
        System.out.printf(Locale.ROOT, "    ElastiCache (Valkey) $%.4f: %.0f ECPUs, taken as the commands the server ran (%.2f per item)"
                + " + storage floor $%.2f a month (100 MB)%n", valkey, used.redisCommands() * million,
                (double) used.redisCommands() / items, 0.1 * VALKEY_GB_HOUR * HOURS_PER_MONTH);
        System.out.printf(Locale.ROOT, "    Aurora + RDS Proxy $%.2f: %.1f ACU-hours, from Postgres's measured CPU (%.3f ms per item, %.2f statements"
                        + " per item) at %.2f vCPU per ACU + floors $%.0f a month (0.5 ACU) and $%.0f (proxy, 8 ACU)%n",
                aurora, acuHours * million, postgresCpuSeconds * 1e3 / items, (double) used.postgres().work() / items, VCPU_PER_ACU,
                0.5 * AURORA_ACU_HOUR * HOURS_PER_MONTH, 8 * PROXY_ACU_HOUR * HOURS_PER_MONTH);
    }

    /**
     * Where a function's sampled CPU went, by kind of thread (the invoking thread, virtual threads'
     * carriers, a client's event loop, ...): the split of the all-thread ratio above.
     */
    private static void threadKinds(InvocationMeter.FunctionCosts f) {
        if (f.samples() == 0 || f.sampledCpuNanos() == 0) {
            return;
        }
        var line = new StringBuilder("      its samples' CPU by thread:");
        f.sampledByThreadKind().entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .filter(kind -> kind.getValue() * 200 >= f.sampledCpuNanos())
                .forEach(kind -> line.append(String.format(Locale.ROOT, " %s %.0f%%,", kind.getKey(), 100.0 * kind.getValue() / f.sampledCpuNanos())));
        System.out.println(line.substring(0, line.length() - 1) + " (0.5 % and more)");
    }

    static long prefixed(Map<String, Long> byName, String prefix) {
        return byName.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).mapToLong(Map.Entry::getValue).sum();
    }
}
