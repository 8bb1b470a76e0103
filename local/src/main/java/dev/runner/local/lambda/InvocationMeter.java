package dev.runner.local.lambda;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * What each function's invocations cost, measured where they run: count, wall time, Lambda's
 * billed duration (wall time rounded up to the millisecond) and CPU time.
 *
 * <p><b>CPU.</b> An invocation runs on its caller's thread (a poller, an API request, a schedule
 * tick), but not only there: the item worker calls handlers on virtual threads, the HTTP client
 * and the Redis client do I/O on threads of their own. So CPU is measured two ways:
 * <ul>
 *   <li>for every invocation, the CPU time of its caller's thread during the call (exact, thread
 *       CPU time from the JVM);</li>
 *   <li>for a sample of invocations, everything the function's code used: the invocation runs
 *       alone, no other invocation of any function running meanwhile (a write lock where every
 *       other invocation takes the read lock), and its
 *       CPU is the sum over every thread the functions' code runs on (the threads of the
 *       {@link #threadGroup() functions' thread group}, which threads created by the functions'
 *       code inherit, and the carrier threads of virtual threads), less the other callers'.</li>
 * </ul>
 * A function's CPU is then its callers' exact total scaled by the ratio of all-thread CPU to
 * caller-thread CPU over its samples (a ratio estimator); {@link FunctionCosts#cpuStandardError}
 * is that estimate's standard error. Not counted: the JVM's garbage collector and compiler
 * threads, which are not Java threads and are shared by every function here (the benchmark
 * reports them apart), and a platform thread that a sampled invocation starts and that ends
 * before the invocation does (the JVM forgets a thread's CPU time when it ends; the functions'
 * client threads live as long as their clients, and virtual threads are measured on their
 * carriers, which stay). Sampling makes the other invocations wait while one runs alone, so it is
 * rationed: an invocation is sampled only while its function's time alone (waiting for the
 * others to finish included) is under its equal part of {@code aloneShare} of the time since the
 * meter started, then with a chance of one in four, or always while its function has fewer than
 * three samples; one invocation at a time, and only if the invocations running end within
 * {@link #DRAIN_LIMIT} (else it runs with the others, unsampled). Which invocations are sampled depends on time, not on what they carry. The time spent
 * alone is reported ({@link Snapshot#aloneNanos}), so a benchmark can say what sampling cost.
 */
public final class InvocationMeter {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One function's totals. CPU and time in nanoseconds. */
    public record FunctionCosts(String logicalId, int memoryMb, long invocations, long records, long wallNanos,
                                long billedMillis, long callerCpuNanos, long samples, long sampledCpuNanos,
                                long sampledCallerCpuNanos, long sampledWallNanos, long sampledBilledMillis, Moments moments,
                                Map<String, Long> sampledByThreadKind) {

        /**
         * @param sampledByThreadKind the samples' CPU by the kind of thread it ran on ({@link #threadKind}): the
         *                            invoking thread ({@link #INVOKING}), virtual threads' carriers, a client's event
         *                            loop, ...; the parts add up to {@code sampledCpuNanos}
         */
        public FunctionCosts {
            sampledByThreadKind = Map.copyOf(sampledByThreadKind);
        }

        /** As before the split by thread kind: none recorded. */
        public FunctionCosts(String logicalId, int memoryMb, long invocations, long records, long wallNanos,
                             long billedMillis, long callerCpuNanos, long samples, long sampledCpuNanos,
                             long sampledCallerCpuNanos, long sampledWallNanos, long sampledBilledMillis, Moments moments) {
            this(logicalId, memoryMb, invocations, records, wallNanos, billedMillis, callerCpuNanos, samples, sampledCpuNanos,
                    sampledCallerCpuNanos, sampledWallNanos, sampledBilledMillis, moments, Map.of());
        }

        /** All-thread CPU over caller-thread CPU, from the samples; 1 without samples. */
        public double cpuRatio() {
            return samples == 0 || sampledCallerCpuNanos == 0 ? 1.0 : (double) sampledCpuNanos / sampledCallerCpuNanos;
        }

        /** The function's CPU: exact caller-thread CPU scaled by the sampled ratio. */
        public double cpuNanos() {
            return callerCpuNanos * cpuRatio();
        }

        /**
         * Standard error of {@link #cpuNanos()}: the ratio estimator's, from the samples' residuals
         * around the ratio (NaN with fewer than two samples).
         */
        public double cpuStandardError() {
            if (samples < 2 || sampledCallerCpuNanos == 0) {
                return Double.NaN;
            }
            double r = cpuRatio();
            double residuals = Math.max(0, moments.allSquares() - 2 * r * moments.allTimesCaller() + r * r * moments.callerSquares());
            double meanCaller = (double) sampledCallerCpuNanos / samples;
            double ratioError = Math.sqrt(residuals / (samples - 1) / samples) / meanCaller;
            return callerCpuNanos * ratioError;
        }

        FunctionCosts minus(FunctionCosts earlier) {
            Map<String, Long> byKind = new java.util.TreeMap<>(sampledByThreadKind);
            earlier.sampledByThreadKind.forEach((kind, nanos) -> byKind.merge(kind, -nanos, Long::sum));
            byKind.values().removeIf(nanos -> nanos == 0);
            return new FunctionCosts(logicalId, memoryMb, invocations - earlier.invocations, records - earlier.records,
                    wallNanos - earlier.wallNanos, billedMillis - earlier.billedMillis, callerCpuNanos - earlier.callerCpuNanos,
                    samples - earlier.samples, sampledCpuNanos - earlier.sampledCpuNanos,
                    sampledCallerCpuNanos - earlier.sampledCallerCpuNanos, sampledWallNanos - earlier.sampledWallNanos,
                    sampledBilledMillis - earlier.sampledBilledMillis, moments.minus(earlier.moments), byKind);
        }
    }

    /** Second moments of the samples (all-thread CPU a, caller CPU c, in ns): Σa², Σac, Σc². */
    public record Moments(double allSquares, double allTimesCaller, double callerSquares) {
        static final Moments NONE = new Moments(0, 0, 0);

        Moments plus(long all, long caller) {
            return new Moments(allSquares + (double) all * all, allTimesCaller + (double) all * caller,
                    callerSquares + (double) caller * caller);
        }

        Moments minus(Moments earlier) {
            return new Moments(allSquares - earlier.allSquares, allTimesCaller - earlier.allTimesCaller,
                    callerSquares - earlier.callerSquares);
        }
    }

    /** Everything at one instant; {@link #since} gives what happened between two. */
    public record Snapshot(Map<String, FunctionCosts> functions, long aloneNanos) {
        public Snapshot since(Snapshot earlier) {
            Map<String, FunctionCosts> delta = new LinkedHashMap<>();
            functions.forEach((id, costs) -> {
                FunctionCosts before = earlier.functions.get(id);
                delta.put(id, before == null ? costs : costs.minus(before));
            });
            return new Snapshot(delta, aloneNanos - earlier.aloneNanos);
        }
    }

    /** The thread kind of the invoking thread, in {@link FunctionCosts#sampledByThreadKind}. */
    public static final String INVOKING = "invoking thread";
    /** The thread kind of virtual threads' carriers: the virtual threads functions start run there. */
    public static final String VIRTUAL = "virtual threads (carriers)";

    /** What a thread is for, from its name without its number: {@code lettuce-nioEventLoop-4-2} is {@code lettuce-nioEventLoop}. */
    static String threadKind(Thread thread) {
        if ("CarrierThreads".equals(thread.getThreadGroup() == null ? null : thread.getThreadGroup().getName())) {
            return VIRTUAL;
        }
        String kind = thread.getName().replaceAll("[-#_ ]*[0-9]+([-#_ ][0-9]+)*$", "");
        return kind.isEmpty() ? "(unnamed)" : kind;
    }

    /** How long a sample may wait for the running invocations to end (every new one waits meanwhile). */
    private static final java.time.Duration DRAIN_LIMIT = java.time.Duration.ofMillis(100);

    private final double aloneShare;
    private final Set<String> alwaysAlone;
    private final long started = System.nanoTime();
    private final ThreadGroup functions = new ThreadGroup("runner-functions");
    /** Threads of the functions' group that call functions (pollers, API workers, ticks): not the functions' own. */
    private final Set<Thread> callers = ConcurrentHashMap.newKeySet();
    private final ReentrantReadWriteLock exclusive = new ReentrantReadWriteLock(true);
    private final Map<String, Accumulator> byFunction = new ConcurrentHashMap<>();
    /** Time spent draining for, and running, invocations alone: the others waited that long. */
    private final AtomicLong alone = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicBoolean sampling = new java.util.concurrent.atomic.AtomicBoolean();

    /** @param aloneShare at most this share of the time is spent running sampled invocations alone; 0 = no samples */
    public InvocationMeter(double aloneShare) {
        this(aloneShare, Set.of());
    }

    /**
     * @param alwaysAlone functions (logical ids) whose every invocation is sampled alone, however long the others take
     *                    to finish and whatever the share: for a function of few, long invocations (the run worker's
     *                    fetches), which the share's draining limit would otherwise never sample
     */
    public InvocationMeter(double aloneShare, Set<String> alwaysAlone) {
        if (aloneShare < 0 || aloneShare > 1) {
            throw new IllegalArgumentException("alone share must be within 0..1: " + aloneShare);
        }
        this.aloneShare = aloneShare;
        this.alwaysAlone = Set.copyOf(alwaysAlone);
    }

    /** The group of the threads that run functions' code; threads they create inherit it. */
    public ThreadGroup threadGroup() {
        return functions;
    }

    /** Platform threads in the functions' group that call functions, named {@code name-N}. */
    public ThreadFactory callerThreads(String name) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(functions, task, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            registerCaller(thread);
            return thread;
        };
    }

    /** A thread that calls functions: its CPU outside invocations is the runtime's, not a function's. */
    public void registerCaller(Thread thread) {
        callers.add(thread);
    }

    /** Runs {@code work} on a thread of the functions' group (loading functions: what their constructors start is theirs). */
    public <T> T inFunctionGroup(Supplier<T> work) {
        List<T> result = new ArrayList<>(1);
        RuntimeException[] failure = new RuntimeException[1];
        Thread thread = new Thread(functions, () -> {
            try {
                result.add(work.get());
            } catch (RuntimeException e) {
                failure[0] = e;
            }
        }, "runner-functions-load");
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while loading functions", e);
        }
        if (failure[0] != null) {
            throw failure[0];
        }
        return result.getFirst();
    }

    /** Measures one invocation of function {@code logicalId} ({@code memoryMb} of memory) carrying {@code records} records. */
    public <T> T measure(String logicalId, int memoryMb, int records, Supplier<T> invocation) {
        Accumulator accumulator = byFunction.computeIfAbsent(logicalId, id -> new Accumulator(id, memoryMb));
        // Each function gets an equal part of the time alone, so a slow one cannot starve the others of samples.
        double budget = aloneShare * (System.nanoTime() - started) / byFunction.size();
        boolean always = alwaysAlone.contains(logicalId);
        long waitStart = System.nanoTime();
        boolean sampled = always ? takeSamplingTurn()
                : aloneShare > 0 && accumulator.aloneNanos() < budget
                && (accumulator.samples() < 3 || ThreadLocalRandom.current().nextInt(4) == 0)
                && sampling.compareAndSet(false, true); // one at a time: the time alone adds up
        Lock lock;
        // The others must finish first, and new ones wait meanwhile: a long one running would stall everything, so give up after a while.
        if (sampled && always) {
            exclusive.writeLock().lock();
            lock = exclusive.writeLock();
        } else if (sampled && tryLock(exclusive.writeLock())) {
            lock = exclusive.writeLock();
        } else {
            if (sampled) {
                sampled = false;
                long waited = System.nanoTime() - waitStart;
                alone.addAndGet(waited);
                accumulator.addAlone(waited);
                sampling.set(false);
            }
            lock = exclusive.readLock();
            lock.lock();
        }
        try {
            Map<Long, ThreadCpu> othersBefore = sampled ? functionThreadsCpu() : Map.of();
            long callerBefore = THREADS.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            try {
                return invocation.get();
            } finally {
                long wall = System.nanoTime() - start;
                long caller = Math.max(0, THREADS.getCurrentThreadCpuTime() - callerBefore);
                long all = caller;
                Map<String, Long> byKind = Map.of();
                if (sampled) {
                    byKind = othersSince(othersBefore);
                    all += byKind.values().stream().mapToLong(Long::longValue).sum();
                    byKind = new java.util.HashMap<>(byKind);
                    byKind.merge(INVOKING, caller, Long::sum);
                }
                accumulator.add(records, wall, caller, sampled, all, byKind);
            }
        } finally {
            lock.unlock();
            if (sampled) {
                long aloneNanos = System.nanoTime() - waitStart;
                alone.addAndGet(aloneNanos);
                accumulator.addAlone(aloneNanos);
                sampling.set(false);
            }
        }
    }

    /** Waits for the sampling in progress, if any, to end, and takes the next turn. */
    private boolean takeSamplingTurn() {
        while (!sampling.compareAndSet(false, true)) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
        return true;
    }

    /** The write lock, if the invocations running now end within {@link #DRAIN_LIMIT}. */
    private static boolean tryLock(Lock lock) {
        try {
            return lock.tryLock(DRAIN_LIMIT.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public Snapshot snapshot() {
        Map<String, FunctionCosts> functions = new LinkedHashMap<>();
        byFunction.values().stream().sorted((a, b) -> a.logicalId.compareTo(b.logicalId))
                .forEach(a -> functions.put(a.logicalId, a.costs()));
        return new Snapshot(Collections.unmodifiableMap(functions), alone.get());
    }

    /** One thread's CPU at an instant, with its kind. */
    private record ThreadCpu(String kind, long nanos) {}

    /** CPU of every thread functions' code may run on but the current one and the callers, by thread id. */
    private Map<Long, ThreadCpu> functionThreadsCpu() {
        Thread current = Thread.currentThread();
        List<Thread> threads = new ArrayList<>();
        for (Thread thread : allThreads()) {
            ThreadGroup group = thread.getThreadGroup();
            if (thread == current || group == null || callers.contains(thread)) {
                continue;
            }
            if (functions.parentOf(group) || "CarrierThreads".equals(group.getName())) {
                threads.add(thread);
            }
        }
        long[] ids = new long[threads.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = threads.get(i).threadId();
        }
        long[] cpu = THREADS.getThreadCpuTime(ids);
        Map<Long, ThreadCpu> byId = new java.util.HashMap<>(ids.length * 2);
        for (int i = 0; i < ids.length; i++) {
            if (cpu[i] >= 0) {
                byId.put(ids[i], new ThreadCpu(threadKind(threads.get(i)), cpu[i]));
            }
        }
        return byId;
    }

    /** CPU those threads used since {@code before}, by thread kind; threads started meanwhile count from zero. */
    private Map<String, Long> othersSince(Map<Long, ThreadCpu> before) {
        Map<String, Long> used = new java.util.HashMap<>();
        for (var entry : functionThreadsCpu().entrySet()) {
            ThreadCpu earlier = before.get(entry.getKey());
            long nanos = Math.max(0, entry.getValue().nanos() - (earlier == null ? 0 : earlier.nanos()));
            if (nanos > 0) {
                used.merge(entry.getValue().kind(), nanos, Long::sum);
            }
        }
        return used;
    }

    private static Thread[] allThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() + 64];
        int count = root.enumerate(threads, true);
        return java.util.Arrays.copyOf(threads, count);
    }

    /** A function's running totals. */
    private static final class Accumulator {
        private final String logicalId;
        private final int memoryMb;
        private long invocations;
        private long records;
        private long wallNanos;
        private long billedMillis;
        private long callerCpuNanos;
        private long samples;
        private long sampledCpuNanos;
        private long sampledCallerCpuNanos;
        private long sampledWallNanos;
        private long sampledBilledMillis;
        private Moments moments = Moments.NONE;
        /** Time its sampled invocations ran alone, waits for the others included: its share of the sampling's cost. */
        private final AtomicLong alone = new AtomicLong();

        Accumulator(String logicalId, int memoryMb) {
            this.logicalId = logicalId;
            this.memoryMb = memoryMb;
        }

        private final Map<String, Long> sampledByThreadKind = new java.util.TreeMap<>();

        synchronized void add(int records, long wall, long caller, boolean sampled, long all, Map<String, Long> byKind) {
            invocations++;
            this.records += records;
            wallNanos += wall;
            // Lambda bills duration rounded up to the next millisecond.
            long billed = Math.max(1, (wall + 999_999) / 1_000_000);
            billedMillis += billed;
            callerCpuNanos += caller;
            if (sampled && caller > 0) {
                samples++;
                sampledCpuNanos += all;
                sampledCallerCpuNanos += caller;
                sampledWallNanos += wall;
                sampledBilledMillis += billed;
                moments = moments.plus(all, caller);
                byKind.forEach((kind, nanos) -> sampledByThreadKind.merge(kind, nanos, Long::sum));
            }
        }

        synchronized FunctionCosts costs() {
            return new FunctionCosts(logicalId, memoryMb, invocations, records, wallNanos, billedMillis, callerCpuNanos,
                    samples, sampledCpuNanos, sampledCallerCpuNanos, sampledWallNanos, sampledBilledMillis, moments, sampledByThreadKind);
        }

        synchronized long samples() {
            return samples;
        }

        long aloneNanos() {
            return alone.get();
        }

        void addAlone(long nanos) {
            alone.addAndGet(nanos);
        }
    }
}
