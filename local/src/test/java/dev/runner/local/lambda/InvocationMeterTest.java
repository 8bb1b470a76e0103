package dev.runner.local.lambda;

import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InvocationMeterTest {

    private static final long BURN_NANOS = 40_000_000;

    @Test
    void anInvocationRunAloneCountsTheThreadsItsCodeStarts() throws Exception {
        var meter = new InvocationMeter(1.0);
        ExecutorService caller = Executors.newSingleThreadExecutor(meter.callerThreads("poller"));
        ExecutorService[] client = new ExecutorService[1];
        try {
            for (int i = 0; i < 3; i++) {
                caller.submit(invoke(meter, () -> {
                    if (client[0] == null) {
                        // Started by the function's code, so in the functions' group: a client's I/O thread.
                        client[0] = Executors.newSingleThreadExecutor();
                    }
                    return client[0].submit(InvocationMeterTest::burn).get();
                })).get();
            }
        } finally {
            caller.shutdown();
            if (client[0] != null) {
                client[0].shutdown();
            }
        }
        InvocationMeter.FunctionCosts costs = meter.snapshot().functions().get("Fn");
        assertEquals(3, costs.invocations());
        assertEquals(3, costs.samples(), "the first three invocations of a function are always sampled");
        assertTrue(costs.callerCpuNanos() < BURN_NANOS, "the caller itself only waited: " + costs.callerCpuNanos());
        assertTrue(costs.cpuNanos() >= 3 * BURN_NANOS * 0.9, "the helper's CPU is the function's: " + costs.cpuNanos());
        assertTrue(meter.snapshot().aloneNanos() > 0);
        long helper = costs.sampledByThreadKind().entrySet().stream().filter(kind -> kind.getKey().startsWith("pool-"))
                .mapToLong(java.util.Map.Entry::getValue).sum();
        assertTrue(helper >= 3 * BURN_NANOS * 0.9, "the split names the helper's kind of thread: " + costs.sampledByThreadKind());
        assertEquals(costs.sampledCpuNanos(), costs.sampledByThreadKind().values().stream().mapToLong(Long::longValue).sum(),
                "the kinds add up to the samples' CPU");
        assertTrue(costs.sampledByThreadKind().containsKey(InvocationMeter.INVOKING), costs.sampledByThreadKind().toString());
    }

    @Test
    void aThreadsKindIsItsNameWithoutItsNumbers() {
        assertEquals("lettuce-nioEventLoop", InvocationMeter.threadKind(new Thread("lettuce-nioEventLoop-4-2")));
        assertEquals("runner housekeeper", InvocationMeter.threadKind(new Thread("runner housekeeper")));
        assertEquals("(unnamed)", InvocationMeter.threadKind(new Thread("7")));
    }

    @Test
    void aFunctionNamedAlwaysAloneIsSampledEveryTimeWhateverTheShare() throws Exception {
        var meter = new InvocationMeter(0, java.util.Set.of("Fn"));
        ExecutorService caller = Executors.newSingleThreadExecutor(meter.callerThreads("poller"));
        try {
            for (int i = 0; i < 5; i++) {
                caller.submit(invoke(meter, () -> null)).get();
            }
        } finally {
            caller.shutdown();
        }
        assertEquals(5, meter.snapshot().functions().get("Fn").samples(), "a share of 0 samples nothing, but Fn always runs alone");
    }

    @Test
    void virtualThreadsOfTheInvocationAreCounted() throws Exception {
        // A virtual thread's own CPU time cannot be read: the same work is timed on this thread first.
        long rounds = 1;
        long cpu;
        do {
            rounds *= 2;
            long start = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            work(rounds);
            cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - start;
        } while (cpu < BURN_NANOS);
        long workRounds = rounds;
        // The JIT may compile the loop further after the calibration: the fastest of a few runs is the yardstick.
        for (int i = 0; i < 3; i++) {
            long start = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            work(workRounds);
            cpu = Math.min(cpu, ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - start);
        }
        var meter = new InvocationMeter(1.0);
        ExecutorService caller = Executors.newSingleThreadExecutor(meter.callerThreads("poller"));
        try {
            caller.submit(invoke(meter, () -> {
                Thread.ofVirtual().start(() -> work(workRounds)).join();
                return null;
            })).get();
        } finally {
            caller.shutdown();
        }
        double counted = meter.snapshot().functions().get("Fn").cpuNanos();
        assertTrue(counted >= cpu * 0.5, "on a carrier thread, counted: " + counted + " ns for work of " + cpu + " ns");
    }

    @Test
    void withoutSamplesTheCallersCpuIsAllThatIsCounted() throws Exception {
        var meter = new InvocationMeter(0);
        ExecutorService caller = Executors.newSingleThreadExecutor(meter.callerThreads("poller"));
        try {
            caller.submit(invoke(meter, () -> {
                burn();
                return null;
            })).get();
        } finally {
            caller.shutdown();
        }
        InvocationMeter.FunctionCosts costs = meter.snapshot().functions().get("Fn");
        assertEquals(0, costs.samples());
        assertEquals(1.0, costs.cpuRatio());
        assertTrue(costs.callerCpuNanos() >= BURN_NANOS * 0.9);
        assertEquals(1, costs.records());
        assertTrue(costs.billedMillis() >= 40, "billed in whole milliseconds, rounded up: " + costs.billedMillis());
    }

    @Test
    void theEstimatesErrorComesFromTheSamplesSpreadAroundTheRatio() {
        // Two samples, all-thread CPU 2x and 4x the caller's 10: ratio 3, residuals -10 and +10.
        var moments = new InvocationMeter.Moments(20.0 * 20 + 40.0 * 40, 20.0 * 10 + 40.0 * 10, 10.0 * 10 + 10.0 * 10);
        var costs = new InvocationMeter.FunctionCosts("Fn", 1024, 100, 1000, 0, 0, 1_000, 2, 60, 20, 0, 0, moments);
        assertEquals(3.0, costs.cpuRatio());
        assertEquals(3_000.0, costs.cpuNanos());
        // sqrt((100 + 100) / 1 / 2) / 10 = 1 per unit of caller CPU, times 1,000
        assertEquals(1_000.0, costs.cpuStandardError(), 1e-9);
    }

    private static Callable<Object> invoke(InvocationMeter meter, Callable<Object> work) {
        return () -> meter.measure("Fn", 1024, 1, () -> {
            try {
                return work.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static long sink;

    private static void work(long rounds) {
        long x = 0;
        for (long i = 0; i < rounds; i++) {
            x += Long.numberOfTrailingZeros(x + i) ^ (x >>> 3);
        }
        sink += x;
    }

    private static void burn() {
        var threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long x = 0;
        while (threads.getCurrentThreadCpuTime() - start < BURN_NANOS) {
            x += Long.numberOfTrailingZeros(x + 1);
        }
        if (x == 42) {
            System.out.print("");
        }
    }
}
