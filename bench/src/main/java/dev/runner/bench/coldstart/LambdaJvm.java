package dev.runner.bench.coldstart;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * A fresh JVM started the way Lambda's managed Java runtime starts one: the runtime interface
 * client's jars on the system classpath, the function's code in its task root (the working
 * directory, loaded by the client's own class loader from the root and {@code lib/*.jar}), the
 * runtime's own JVM options, the template's {@code JAVA_TOOL_OPTIONS} in the environment.
 *
 * <p>The options are those the java17/java21 runtimes were seen to pass (heap at 85 % of the
 * function's memory, SerialGC, C1 only, CDS on); the runtime's own CDS archive of its classes is
 * not public, so the JDK's default archive stands in for it. {@code -XX:MaxRAM} gives the JVM the
 * memory Lambda's VM has: the function's.
 */
final class LambdaJvm {

    static final String MAIN = "com.amazonaws.services.lambda.runtime.api.client.AWSLambda";
    /** A dump and a restore take each up to a minute before {@link Criu} gives up on them. */
    private static final Duration CHECKPOINT_WAIT = Duration.ofMinutes(3);
    private static final String JNI_PROPERTY = "com.amazonaws.services.lambda.runtime.api.client.runtimeapi.NativeClient.JNI";
    private static final String RIC_JAR_PREFIX = "aws-lambda-java-runtime-interface-client";

    /**
     * One cold start: times in ms from process start; {@code warmMs} is the second event's
     * invocation. The CPU figures are the process's CPU time (all its threads: JIT and GC too)
     * at the end of init and at the first answer: what Lambda's CPU share throttles, and far
     * steadier than wall time on a shared machine.
     */
    record Sample(double totalMs, double initMs, double firstInvokeMs, double warmMs, double cpuInitMs, double cpuTotalMs,
                  boolean failed, String answer, long startNanos, long firstNextNanos, long answeredNanos, Restore restore,
                  Map<String, Long> openedMs) {

        /** @param openedMs what the function's last {@code connections opened} line said, each part's milliseconds (-1: failed); empty if none */
        Sample {
            openedMs = Map.copyOf(openedMs);
        }

        static Sample failed(String why, long startNanos) {
            return new Sample(Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, true, why, startNanos, 0, 0, null, Map.of());
        }
    }

    /**
     * A start restored from a checkpoint instead of a fresh one: the sample's total and CPU then run
     * from the restore to the first answer (the process's CPU from the end of the restore on: CRIU
     * copies the image in from inside the restored task, which counts as the task's), its init from
     * process start to the checkpoint (SnapStart's init, off any request's path).
     *
     * @param restoreMs      CRIU's restore, from its start until the process runs again
     * @param toFirstNextMs  from then until the restored process asks for its first event: the runtime client's
     *                       restore hooks (the functions' start opening their connections there, on threads of their own)
     * @param imageBytes     the checkpoint's size
     * @param heapBytes      the part of it that is the Java heap's pages
     */
    record Restore(double restoreMs, double toFirstNextMs, long imageBytes, long heapBytes) {}

    /**
     * How a start is restored: by {@code criu}, through {@code images}; {@code whileDumped} runs
     * between the dump and the restore (what the process wrote until then is complete), and
     * {@code atFirstAnswer} when the restored process first answers.
     */
    record Snapshot(Criu criu, Path images, Runnable whileDumped, Runnable atFirstAnswer) {}

    private final Path java;
    private final List<Path> runtimeJars;
    private final Path jniLibrary;

    private LambdaJvm(Path java, List<Path> runtimeJars, Path jniLibrary) {
        this.java = java;
        this.runtimeJars = runtimeJars;
        this.jniLibrary = jniLibrary;
    }

    /**
     * The runtime jars in {@code runtimeDir} (bench/target/lambda-runtime); the client's native
     * library is unpacked once next to them, as Lambda keeps it in /var/runtime/lib/jni.
     */
    static LambdaJvm locate(Path runtimeDir) {
        List<Path> jars;
        try (Stream<Path> files = Files.list(runtimeDir)) {
            jars = files.filter(p -> p.toString().endsWith(".jar")).sorted().toList();
        } catch (IOException e) {
            throw new IllegalStateException("no Lambda runtime jars in " + runtimeDir.toAbsolutePath()
                    + " (built by ./mvnw -pl bench -am package): " + e.getMessage(), e);
        }
        Path client = jars.stream().filter(p -> p.getFileName().toString().startsWith(RIC_JAR_PREFIX)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no " + RIC_JAR_PREFIX + " jar in " + runtimeDir.toAbsolutePath()));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return new LambdaJvm(java, jars, unpackJni(client, runtimeDir.resolve("jni")));
    }

    private static Path unpackJni(Path clientJar, Path dir) {
        String arch = System.getProperty("os.arch").contains("aarch64") ? "aarch_64" : "x86_64";
        String name = "libaws-lambda-jni.linux-" + arch + ".so";
        Path target = dir.resolve(name);
        if (Files.isRegularFile(target)) {
            return target;
        }
        try (JarFile jar = new JarFile(clientJar.toFile())) {
            var entry = jar.getJarEntry("jni/" + name);
            if (entry == null) {
                throw new IllegalStateException(clientJar + " has no jni/" + name);
            }
            Files.createDirectories(dir);
            try (InputStream in = jar.getInputStream(entry)) {
                Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The command line, options first, as the runtime's bootstrap builds it; the subject's own options after the runtime's. */
    List<String> command(Subject subject, List<String> diagnostics, boolean restorable) {
        int memoryMb = subject.memoryMb();
        List<String> command = new ArrayList<>();
        if (restorable) {
            // CRIU dumps a process tree whose session it leads; setsid execs in place (same pid).
            command.add("/usr/bin/setsid");
        }
        command.add(java.toString());
        // The JVM sizes its initial heap and young generation from the machine's memory (1/64, 1/3 of
        // that): Lambda's VM has the function's memory, this machine far more, and a young generation
        // 25 times too large would leave init's garbage in memory (and in a snapshot) instead of collecting it.
        command.add("-XX:MaxRAM=" + memoryMb + "m");
        command.add("-XX:MaxHeapSize=" + maxHeapBytes(subject) / 1024 + "k");
        command.add("-XX:+UseSerialGC");
        command.add("-Xshare:auto");
        command.add("-XX:+TieredCompilation");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("--add-opens=java.base/java.io=ALL-UNNAMED");
        command.add("-Dorg.crac.Core.Compat=com.amazonaws.services.lambda.crac");
        command.add("-XX:+ErrorFileToStderr");
        command.add("-D" + JNI_PROPERTY + "=" + jniLibrary.toAbsolutePath());
        command.addAll(subject.jvmOptions());
        command.addAll(diagnostics);
        command.add("-classpath");
        command.add(String.join(File.pathSeparator, runtimeJars.stream().map(p -> p.toAbsolutePath().toString()).toList()));
        command.add(MAIN);
        command.add(subject.handler());
        return command;
    }

    /**
     * Starts the function in a fresh JVM against {@code api}, serves it {@code events} and stops it
     * once every event is answered. The process's output goes to {@code log}.
     */
    Sample run(Subject subject, List<String> events, RuntimeApi api, List<String> diagnostics, Path log, Duration timeout) {
        return run(subject, events, api, diagnostics, log, timeout, null);
    }

    /**
     * As {@link #run(Subject, List, RuntimeApi, List, Path, Duration)}, but a SnapStart init: after
     * its hooks the process is checkpointed and restored through {@code snapshot}, and the figures
     * are those of the restored start ({@link Restore}).
     */
    Sample run(Subject subject, List<String> events, RuntimeApi api, List<String> diagnostics, Path log, Duration timeout,
               Snapshot snapshot) {
        var session = api.open(events, subject.arn(), subject.timeout().toMillis());
        var builder = new ProcessBuilder(command(subject, diagnostics, snapshot != null))
                .directory(subject.taskRoot().toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().clear();
        builder.environment().putAll(lambdaEnvironment(subject, api, snapshot != null));
        if (snapshot != null) {
            // A pipe to this JVM could not be restored; a file can.
            builder.redirectInput(new File("/dev/null"));
        }
        Process process = null;
        AtomicReference<ProcessHandle> live = new AtomicReference<>();
        AtomicLong restoreStarted = new AtomicLong();
        AtomicLong heapBytes = new AtomicLong();
        long start = System.nanoTime();
        try {
            process = builder.start();
            live.set(process.toHandle());
            Process started = process;
            AtomicLong cpuAtInit = new AtomicLong(-1);
            AtomicLong cpuAtAnswer = new AtomicLong(-1);
            AtomicLong cpuAtRestore = new AtomicLong();
            session.watch(() -> cpuAtInit.compareAndSet(-1, cpuNanos(live.get())), () -> {
                long cpu = cpuNanos(live.get());
                cpuAtAnswer.set(cpu < 0 || cpuAtRestore.get() < 0 ? -1 : cpu - cpuAtRestore.get());
                if (snapshot != null) {
                    snapshot.atFirstAnswer().run();
                }
            });
            if (snapshot != null) {
                session.checkpointWith(() -> {
                    cpuAtInit.set(cpuNanos(started.toHandle()));
                    heapBytes.set(ImageParts.heapBytes(started.pid(), HEAP_TOP - maxHeapBytes(subject), HEAP_TOP));
                    snapshot.criu().dump(started.pid(), snapshot.images());
                    try {
                        // The restore takes the same pid: it must have been reaped.
                        started.waitFor();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    snapshot.whileDumped().run();
                    restoreStarted.set(System.nanoTime());
                    snapshot.criu().restore(snapshot.images());
                    live.set(ProcessHandle.of(started.pid()).orElseThrow(() -> new IllegalStateException("restored process gone")));
                    cpuAtRestore.set(cpuNanos(live.get()));
                });
            }
            boolean done = session.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<RuntimeApi.Answer> answers = session.answers();
            if (!done || session.initError() != null || answers.size() < events.size()) {
                String why = session.initError() != null ? "init error " + session.initError()
                        : !done ? "no answer within " + timeout : answers.size() + " of " + events.size() + " answered";
                return Sample.failed(why + "; log " + log, start);
            }
            RuntimeApi.Answer first = answers.getFirst();
            RuntimeApi.Answer last = answers.getLast();
            boolean failed = answers.stream().anyMatch(RuntimeApi.Answer::error);
            long initEnd = snapshot == null ? session.firstNextNanos() : session.checkpointNanos();
            long coldFrom = snapshot == null ? start : restoreStarted.get();
            Restore restore = snapshot == null ? null
                    : new Restore(ms(session.restoredNanos() - restoreStarted.get()), ms(session.firstNextNanos() - session.restoredNanos()),
                    Criu.imageBytes(snapshot.images()), heapBytes.get());
            return new Sample(ms(first.answeredNanos() - coldFrom), ms(initEnd - start),
                    ms(first.answeredNanos() - first.handedOutNanos()),
                    answers.size() > 1 ? ms(last.answeredNanos() - last.handedOutNanos()) : Double.NaN,
                    cpuAtInit.get() < 0 ? Double.NaN : ms(cpuAtInit.get()), cpuAtAnswer.get() < 0 ? Double.NaN : ms(cpuAtAnswer.get()),
                    failed, first.body(), start, session.firstNextNanos(), first.answeredNanos(), restore, lastOpened(log));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + builder.command().getFirst(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            if (process != null) {
                process.destroyForcibly();
                try {
                    process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            try {
                if (snapshot != null && !session.awaitCheckpoint(CHECKPOINT_WAIT)) {
                    System.err.printf("a checkpoint of %s still runs after %s; its process may outlive this start%n", subject.label(), CHECKPOINT_WAIT);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ProcessHandle restored = live.get();
            if (restored != null && restored.isAlive()) {
                restored.destroyForcibly();
                try {
                    restored.onExit().get(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException e) {
                    System.err.printf("the restored process of %s (pid %d) did not end%n", subject.label(), restored.pid());
                }
            }
            session.end();
        }
    }

    /**
     * Where the heap's reservation ends: {@link #command} sizes the heap so that compressed oops need
     * neither base nor shift, and the JVM then places it just under 4 GB.
     */
    private static final long HEAP_TOP = 1L << 32;

    private static long maxHeapBytes(Subject subject) {
        return subject.memoryMb() * 1024L * 85 / 100 * 1024;
    }

    /**
     * Each part's milliseconds in the last {@code connections opened} line the function wrote to {@code log}
     * ({@code app.Openers}: at init, and again after a restore); empty if it wrote none.
     */
    static Map<String, Long> lastOpened(Path log) {
        String last = null;
        try (Stream<String> lines = Files.lines(log)) {
            last = lines.filter(line -> line.contains("\"message\":\"connections opened\"")).reduce((a, b) -> b).orElse(null);
        } catch (IOException | java.io.UncheckedIOException e) {
            return Map.of();
        }
        if (last == null) {
            return Map.of();
        }
        Map<String, Long> opened = new java.util.TreeMap<>();
        try {
            var json = dev.runner.json.Json.parse(last);
            for (String part : List.of("database", "redis", "queues")) {
                // The layout writes a line's key-value fields as strings.
                if (json.has(part) && json.path(part).asText().matches("-?[0-9]+")) {
                    opened.put(part, Long.parseLong(json.path(part).asText()));
                }
            }
        } catch (RuntimeException notJson) {
            return Map.of();
        }
        return opened;
    }

    /** The variables Lambda sets for every function, then the function's own. */
    private static Map<String, String> lambdaEnvironment(Subject subject, RuntimeApi api, boolean snapStart) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("LANG", "en_US.UTF-8");
        env.put("TZ", ":UTC");
        env.put("LAMBDA_TASK_ROOT", subject.taskRoot().toAbsolutePath().toString());
        env.put("_HANDLER", subject.handler());
        env.put("AWS_EXECUTION_ENV", "AWS_Lambda_java21");
        env.put("AWS_LAMBDA_RUNTIME_API", api.address());
        env.put("AWS_LAMBDA_FUNCTION_NAME", subject.name());
        env.put("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", Integer.toString(subject.memoryMb()));
        env.put("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST");
        env.put("AWS_LAMBDA_INITIALIZATION_TYPE", snapStart ? "snap-start" : "on-demand");
        env.put("AWS_LAMBDA_LOG_GROUP_NAME", "/aws/lambda/" + subject.name());
        env.put("AWS_LAMBDA_LOG_STREAM_NAME", "2026/01/01/[$LATEST]coldstart");
        env.put("AWS_SESSION_TOKEN", "local-session-token");
        env.putAll(subject.environment());
        return env;
    }

    private static long cpuNanos(ProcessHandle process) {
        return process.info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
