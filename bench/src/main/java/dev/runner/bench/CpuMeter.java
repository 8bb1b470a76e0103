package dev.runner.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Where the machine's CPU went, read from Linux's {@code /proc}: this JVM's threads by what they
 * are (the kernel's per-thread {@code schedstat}, nanoseconds), and the processes the JVM started
 * (the embedded Postgres with its backends, the embedded Redis). Other processes on the machine
 * are not counted. Off Linux every figure is zero.
 */
final class CpuMeter {

    /** Thread kinds by name prefix (the kernel keeps the first 15 characters), first match wins. */
    private static final List<Map.Entry<String, String>> KINDS = List.of(
            Map.entry("sqs-front", "SQS endpoint (front end + ElasticMQ)"),
            Map.entry("elasticmq", "SQS endpoint (front end + ElasticMQ)"),
            Map.entry("sqs-", "callers: event source mappings"),
            Map.entry("api-", "callers: API requests"),
            Map.entry("schedule-", "callers: schedules"),
            Map.entry("ForkJoinPool.co", "JDK common pool"),
            // The virtual threads' scheduler (the kernel's 15 characters cut the pool's number and worker's name).
            Map.entry("ForkJoinPool-", "virtual threads (functions' handler calls and sends)"),
            Map.entry("lettuce", "functions' client threads (Redis, HTTP, pool)"),
            Map.entry("HttpClient-", "functions' client threads (Redis, HTTP, pool)"),
            Map.entry("runner:", "functions' client threads (Redis, HTTP, pool)"),
            Map.entry("idle-connection", "functions' client threads (Redis, HTTP, pool)"),
            Map.entry("handler-service", "handler service"),
            Map.entry("HTTP-Dispatcher", "HTTP servers' dispatchers (handler service, API)"),
            Map.entry("GC Thread", "JVM: garbage collector"),
            Map.entry("G1 ", "JVM: garbage collector"),
            Map.entry("C1 Compiler", "JVM: JIT compilers"),
            Map.entry("C2 Compiler", "JVM: JIT compilers"),
            Map.entry("VM Thread", "JVM: other"),
            Map.entry("JFR", "profiler (JFR)"),
            Map.entry("main", "benchmark"),
            Map.entry("java", "benchmark"));

    /** Per-thread CPU of this JVM (by tid), its total, and the CPU of the processes it started, by name. */
    record Reading(Map<Integer, Task> threads, long processNanos, Map<Integer, Long> children, Map<Integer, String> childNames) {}

    record Task(String kind, long nanos) {}

    /** What was used between two readings: by thread kind, by child process name, and the JVM's total. */
    record Used(Map<String, Long> byKind, Map<String, Long> byProcess, long jvmNanos) {
        long process(String name) {
            return byProcess.getOrDefault(name, 0L);
        }
    }

    private static final long TICK_NANOS = 10_000_000; // USER_HZ = 100 on Linux

    /** The embedded Postgres listening on {@code port}: its postmaster, found once; -1 when none. */
    static long postmaster(int port) {
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            return processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .filter(p -> {
                        try {
                            String[] argv = Files.readString(p.resolve("cmdline")).split("\0");
                            if (argv.length == 0 || !argv[0].endsWith("/postgres")) {
                                return false;
                            }
                            for (int i = 0; i + 1 < argv.length; i++) {
                                if (argv[i].equals("-p") && argv[i + 1].equals(Integer.toString(port))) {
                                    return true;
                                }
                            }
                            return false;
                        } catch (IOException | RuntimeException e) {
                            return false;
                        }
                    })
                    .mapToLong(p -> Long.parseLong(p.getFileName().toString())).findFirst().orElse(-1);
        } catch (IOException e) {
            return -1;
        }
    }

    static Reading read(long postmaster) {
        Map<Integer, Task> threads = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(task -> {
                try {
                    String comm = Files.readString(task.resolve("comm")).strip();
                    long nanos = Long.parseLong(Files.readString(task.resolve("schedstat")).split(" ")[0]);
                    threads.put(Integer.parseInt(task.getFileName().toString()), new Task(kind(comm), nanos));
                } catch (IOException | RuntimeException e) {
                    // the thread ended while being read
                }
            });
        } catch (IOException e) {
            return new Reading(Map.of(), 0, Map.of(), Map.of());
        }
        long process = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
        Map<Integer, Long> children = new HashMap<>();
        Map<Integer, String> names = new HashMap<>();
        Stream<ProcessHandle> started = descendants(ProcessHandle.current());
        if (postmaster > 0) {
            // Postgres daemonizes (pg_ctl): its postmaster is not this JVM's child.
            started = Stream.concat(started, ProcessHandle.of(postmaster).stream()
                    .flatMap(p -> Stream.concat(Stream.of(p), p.descendants())));
        }
        started.distinct().forEach(child -> {
            long[] cpu = processCpu(child.pid());
            if (cpu != null) {
                children.put((int) child.pid(), cpu[0]);
                names.put((int) child.pid(), child.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("?"));
            }
        });
        return new Reading(threads, process, children, names);
    }

    static Used between(Reading before, Reading after) {
        Map<String, Long> byKind = new LinkedHashMap<>();
        long threadsTotal = 0;
        for (var entry : after.threads().entrySet()) {
            Task earlier = before.threads().get(entry.getKey());
            long used = entry.getValue().nanos() - (earlier == null ? 0 : earlier.nanos());
            if (used > 0) {
                byKind.merge(entry.getValue().kind(), used, Long::sum);
                threadsTotal += used;
            }
        }
        long jvm = after.processNanos() - before.processNanos();
        if (jvm - threadsTotal > 0) {
            byKind.merge("threads that ended meanwhile", jvm - threadsTotal, Long::sum);
        }
        Map<String, Long> byProcess = new LinkedHashMap<>();
        after.children().forEach((pid, nanos) -> {
            long used = nanos - before.children().getOrDefault(pid, 0L);
            if (used > 0) {
                byProcess.merge(after.childNames().get(pid), used, Long::sum);
            }
        });
        return new Used(byKind, byProcess, jvm);
    }

    private static String kind(String comm) {
        for (var kind : KINDS) {
            if (comm.startsWith(kind.getKey())) {
                return kind.getValue();
            }
        }
        return "other (" + comm.replaceAll("[0-9]+", "#") + ")";
    }

    private static Stream<ProcessHandle> descendants(ProcessHandle process) {
        return process.descendants();
    }

    /** utime + stime + the reaped children's, in nanoseconds; null when the process is gone. */
    private static long[] processCpu(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17
            long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]) + Long.parseLong(fields[13]) + Long.parseLong(fields[14]);
            return new long[] {ticks * TICK_NANOS};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
