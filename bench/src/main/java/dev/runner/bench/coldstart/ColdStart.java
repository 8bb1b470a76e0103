package dev.runner.bench.coldstart;

import dev.runner.json.Json;
import dev.runner.local.template.FunctionDefinition;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * The cold-start benchmark (bench/README.md, "Cold start"): every function of
 * template.yaml started as Lambda starts it, in a fresh JVM through the AWS Lambda runtime
 * interface client against a local Runtime API, from process start to its answer to one event
 * (init + first invocation), beside a hello-world handler started the same way. A second event
 * to the same process shows the warm cost: what the first invocation pays above it is what
 * SnapStart priming could move into the snapshot. One more start per function logs class loading
 * and shows where init goes. Prints figures; asserts nothing.
 *
 * <p>Setups (a deployment package, its layout, JAVA_TOOL_OPTIONS, more JVM options) can be
 * compared in one run: each {@code --vs} starts another, and the starts of all setups are
 * interleaved, so a busy machine slows them alike. {@code --baselines} adds two more hello-world
 * handlers: one taking an SQS event (what the runtime client's event serializer costs) and one
 * taking a stream (no serializer at all). {@code --floor} adds the floor of the libraries Runner must use
 * ({@link FloorFunction}, in the functions' package without Runner's code): Powertools' metrics
 * alone, then with a pgjdbc connection, then with a Lettuce connection too.
 *
 * <p>{@code --snapstart} times SnapStart's path instead: each function's init runs as Lambda runs it
 * for a snapshot (the runtime client calls the CRaC hooks, then asks for {@code /restore/next}),
 * the process is checkpointed there and restored by CRIU ({@link Criu}, built by
 * {@code bench/snapstart/build-criu}), and the start is timed from the restore to the first answer,
 * beside hello-world restored the same way and hello-world started fresh (the baseline).
 * {@code --write-class-lists DIR} (with {@code --snapstart}) starts the functions without their class
 * priming and writes, per function, the classes its first invocation loaded after the restore:
 * the lists the functions prime before a checkpoint ({@code functions/src/main/resources/dev/runner/functions/prime}).
 *
 * <pre>
 * java -cp bench/target/runner-bench.jar dev.runner.bench.coldstart.ColdStart [--reps 5] [--only ItemWorker,Api] [--no-classes] [--baselines] [--floor]
 *      [--snapstart [--criu PATH] [--lazy-pages] [--write-class-lists DIR]]
 *      [--code functions/target/runner-functions.zip | JAR | DIR] [--jar-in-lib] [--java-tool-options "…"] [--jvm "-XX:…"]
 *      [--vs [--code …] [--jar-in-lib] [--java-tool-options "…"] [--jvm "…"]]…
 * </pre>
 * Run from the project directory (template.yaml, events/, bench/target/lambda-runtime).
 */
public final class ColdStart {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String HELLO = "Hello";
    /** The application's own classes: gaps between their loads are its steps. */
    private static final String APPLICATION = "dev.runner.";
    private static final String HELLO_FRESH = "HelloFresh";
    /** The libraries' floor ({@link FloorFunction}); its rows are named Floor-metrics, Floor-metrics+postgres, … */
    static final String FLOOR = "Floor";
    private static final String USAGE = "usage: [--reps N] [--only A,B] [--no-classes] [--baselines] [--floor] [--snapstart [--criu PATH] [--lazy-pages] [--write-class-lists DIR]] [--code JAR|ZIP|DIR] [--jar-in-lib]"
            + " [--java-tool-options \"…\"] [--jvm \"…\"] [--vs <the same setup options>]…";

    /**
     * How the functions are deployed and started.
     *
     * @param javaToolOptions replaces the template's JAVA_TOOL_OPTIONS (blank = none); null keeps the template's
     * @param jvm             more options on the JVM's command line, after the runtime's
     */
    record Setup(Path code, boolean jarInLib, String javaToolOptions, List<String> jvm) {
        static Setup asDeployed() {
            return new Setup(Path.of("functions/target/runner-functions.zip"), false, null, List.of());
        }

        String label() {
            List<String> parts = new ArrayList<>();
            if (!code.equals(asDeployed().code)) {
                parts.add(code.toString());
            }
            if (jarInLib) {
                parts.add("jar in lib/");
            }
            if (javaToolOptions != null) {
                parts.add("JAVA_TOOL_OPTIONS=" + (javaToolOptions.isBlank() ? "(none)" : javaToolOptions));
            }
            if (!jvm.isEmpty()) {
                parts.add(String.join(" ", jvm));
            }
            return parts.isEmpty() ? "as deployed" : String.join(", ", parts);
        }
    }

    /** The command line. */
    record Options(int reps, List<String> only, boolean classes, boolean baselines, boolean floor, boolean snapStart, Path criu,
                   boolean lazyPages, Path classLists, List<Setup> setups, Path template, Path events, Path runtime, Path work) {

        static Options parse(String[] args) {
            int reps = 5;
            List<String> only = List.of();
            boolean classes = true;
            boolean baselines = false;
            boolean floor = false;
            boolean snapStart = false;
            Path criu = null;
            boolean lazyPages = false;
            Path classLists = null;
            List<Setup> setups = new ArrayList<>();
            Setup setup = Setup.asDeployed();
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--reps" -> reps = Integer.parseInt(value(args, ++i, arg));
                    case "--only" -> only = Arrays.asList(value(args, ++i, arg).split(","));
                    case "--no-classes" -> classes = false;
                    case "--baselines" -> baselines = true;
                    case "--floor" -> floor = true;
                    case "--snapstart" -> snapStart = true;
                    case "--criu" -> criu = Path.of(value(args, ++i, arg));
                    case "--lazy-pages" -> lazyPages = true;
                    case "--write-class-lists" -> classLists = Path.of(value(args, ++i, arg));
                    case "--code" -> setup = new Setup(Path.of(value(args, ++i, arg)), setup.jarInLib(), setup.javaToolOptions(), setup.jvm());
                    case "--jar-in-lib" -> setup = new Setup(setup.code(), true, setup.javaToolOptions(), setup.jvm());
                    case "--java-tool-options" -> setup = new Setup(setup.code(), setup.jarInLib(), value(args, ++i, arg), setup.jvm());
                    case "--jvm" -> setup = new Setup(setup.code(), setup.jarInLib(), setup.javaToolOptions(),
                            Arrays.stream(value(args, ++i, arg).trim().split("\\s+")).filter(s -> !s.isEmpty()).toList());
                    case "--vs" -> {
                        setups.add(setup);
                        setup = Setup.asDeployed();
                    }
                    default -> throw new IllegalArgumentException("unknown argument " + arg + "; " + USAGE);
                }
            }
            setups.add(setup);
            if (classLists != null && !snapStart) {
                throw new IllegalArgumentException("--write-class-lists lists what a restored start loads: it needs --snapstart");
            }
            if (classLists != null) {
                // Listed from starts that prime nothing, or each list would shrink to what the last one missed.
                setups.replaceAll(s -> new Setup(s.code(), s.jarInLib(), s.javaToolOptions(),
                        Stream.concat(s.jvm().stream(), Stream.of("-Drunner.primeClasses=false")).toList()));
            }
            if (lazyPages && !snapStart) {
                throw new IllegalArgumentException("--lazy-pages is how a snapshot is restored: it needs --snapstart");
            }
            if (floor && snapStart) {
                throw new IllegalArgumentException("--floor measures a fresh JVM: the floor registers no SnapStart hooks");
            }
            if (reps < 1) {
                throw new IllegalArgumentException("--reps < 1: " + reps);
            }
            return new Options(reps, only, classes || classLists != null, baselines, floor, snapStart, criu, lazyPages, classLists, setups,
                    Path.of("template.yaml"), Path.of("events"),
                    Path.of("bench/target/lambda-runtime"), Path.of("bench/target/coldstart"));
        }

        private static String value(String[] args, int i, String name) {
            if (i >= args.length) {
                throw new IllegalArgumentException(name + " needs a value; " + USAGE);
            }
            return args[i];
        }
    }

    /** One subject's figures: the timed starts and the logged one. */
    record Result(Subject subject, List<LambdaJvm.Sample> samples, LambdaJvm.Sample logged, ClassLoadLog log) {
        double median(ToDoubleFunction<LambdaJvm.Sample> figure) {
            double[] values = samples.stream().filter(s -> !s.failed()).mapToDouble(figure).sorted().toArray();
            if (values.length == 0) {
                return Double.NaN;
            }
            int middle = values.length / 2;
            return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
        }

        long failures() {
            return samples.stream().filter(LambdaJvm.Sample::failed).count();
        }

        String classes() {
            if (log != null && logged.restore() != null) {
                return String.format(Locale.ROOT, "%,d after the restore", log.all().classes());
            }
            return log == null ? "–" : String.format(Locale.ROOT, "%,d + %,d", log.phase(logged.startNanos(), logged.firstNextNanos()).classes(),
                    log.phase(logged.firstNextNanos(), logged.answeredNanos() + 1).classes());
        }
    }

    private ColdStart() {}

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(64);
            return;
        }
        run(options);
        System.exit(0);
    }

    /** Runs every setup's subjects, interleaved; returns the results of each setup, hello first. */
    static List<List<Result>> run(Options options) {
        Path work = fresh(options.work());
        LambdaJvm jvm = LambdaJvm.locate(options.runtime());
        Criu criu = !options.snapStart() ? null : Criu.locate(options.criu()).map(c -> options.lazyPages() ? c.lazily() : c)
                .orElseThrow(() -> new IllegalStateException(
                "--snapstart needs CRIU, and none runs here: build it with bench/snapstart/build-criu (as root), or give --criu PATH"));
        try (var stack = ColdStartStack.start(options.template(), options.events())) {
            List<List<Subject>> setups = new ArrayList<>();
            for (Setup setup : options.setups()) {
                setups.add(subjects(stack, options, setup, work));
            }
            System.out.printf("%nCold start: each function and a hello-world handler in a fresh JVM through the Lambda runtime"
                    + " interface client (%s), %d starts each (median), JVM %s with the java21 runtime's options%n",
                    runtimeClient(options.runtime()), options.reps(), Runtime.version());
            if (criu != null) {
                System.out.printf("SnapStart's path: init for a snapshot, checkpointed at /restore/next and restored by %s%s;"
                        + " timed from the restore to the first answer%n", criu.binary(),
                        criu.lazyPages() ? " page by page as they are touched (lazy-pages)" : ", the whole image read in first");
                setups.forEach(subjects -> subjects.add(1, freshHello(subjects.getFirst())));
            }

            // The first start pays for the page cache and this JVM's own warm-up: not counted.
            start(jvm, stack, setups.getFirst().getFirst(), List.of(), work.resolve("warmup.log"), null);
            Map<Subject, List<LambdaJvm.Sample>> samples = new LinkedHashMap<>();
            for (int rep = 1; rep <= options.reps(); rep++) {
                for (int s = 0; s < setups.size(); s++) {
                    for (Subject subject : setups.get(s)) {
                        String name = s + "-" + subject.label() + "-" + rep;
                        var sample = start(jvm, stack, subject, List.of(), work.resolve(name + ".log"),
                                snapshot(criu, subject, work.resolve(name + ".images"), () -> {}, () -> {}));
                        samples.computeIfAbsent(subject, k -> new ArrayList<>()).add(sample);
                        if (sample.failed()) {
                            System.out.printf("  %s start %d failed: %s%n", subject.label(), rep, abbreviate(sample.answer(), 300));
                        }
                    }
                }
            }
            List<List<Result>> results = new ArrayList<>();
            for (int s = 0; s < setups.size(); s++) {
                List<Result> setupResults = new ArrayList<>();
                for (Subject subject : setups.get(s)) {
                    LambdaJvm.Sample logged = null;
                    ClassLoadLog log = null;
                    if (options.classes()) {
                        Path file = work.resolve(s + "-" + subject.label() + "-classes.log");
                        AtomicLong dumpedAt = new AtomicLong();
                        AtomicLong answeredAt = new AtomicLong(Long.MAX_VALUE);
                        logged = start(jvm, stack, subject, List.of(ClassLoadLog.option(file)), work.resolve(s + "-" + subject.label() + "-logged.log"),
                                snapshot(criu, subject, work.resolve(s + "-" + subject.label() + "-logged.images"), () -> dumpedAt.set(file.toFile().length()),
                                        () -> answeredAt.set(file.toFile().length())));
                        log = logged.failed() ? null : ClassLoadLog.read(file, dumpedAt.get(), answeredAt.get());
                    }
                    setupResults.add(new Result(subject, samples.get(subject), logged, log));
                }
                results.add(setupResults);
            }
            for (int s = 0; s < results.size(); s++) {
                System.out.printf("%nSetup %d: %s%n  JAVA_TOOL_OPTIONS=%s%n", s + 1, options.setups().get(s).label(),
                        setups.get(s).getFirst().environment().getOrDefault("JAVA_TOOL_OPTIONS", "(none)"));
                if (criu != null) {
                    restoredTable(results.get(s));
                } else {
                    table(results.get(s));
                }
            }
            if (results.size() > 1) {
                comparison(options.setups(), results);
            }
            if (options.classes() && criu != null) {
                afterTheRestore(results.getFirst(), work, options.classLists());
            } else if (options.classes()) {
                whereItGoes(results.getFirst());
            }
            return results;
        }
    }

    /**
     * One start, against a Runtime API of its own: a process of an earlier start that has not died
     * yet (a restored one is not this JVM's child, and its last {@code /next} may still be on the
     * wire) cannot take this start's events from another port.
     */
    private static LambdaJvm.Sample start(LambdaJvm jvm, ColdStartStack stack, Subject subject,
                                          List<String> diagnostics, Path log, LambdaJvm.Snapshot snapshot) {
        String function = isFreshHello(subject) ? HELLO : subject.logicalId();
        LambdaJvm.Sample sample;
        try (var api = RuntimeApi.start()) {
            List<String> events = List.of(stack.event(function, api.cfnResponseUrl()), stack.event(function, api.cfnResponseUrl()));
            sample = jvm.run(subject, events, api, diagnostics, log, TIMEOUT, snapshot);
        }
        if (snapshot != null && !sample.failed()) {
            // A failed one keeps its images and CRIU's logs, which its failure names.
            fresh(snapshot.images()).toFile().delete();
        }
        return sample;
    }

    private static boolean isJdk(String className) {
        return ClassLoadLog.Library.of(className) == ClassLoadLog.Library.JDK;
    }

    private static boolean isFreshHello(Subject subject) {
        return subject.logicalId().equals(HELLO_FRESH);
    }

    /** How to restore this subject's start: none without CRIU, and none for the fresh baseline. */
    private static LambdaJvm.Snapshot snapshot(Criu criu, Subject subject, Path images, Runnable whileDumped, Runnable atFirstAnswer) {
        return criu == null || isFreshHello(subject) ? null : new LambdaJvm.Snapshot(criu, images, whileDumped, atFirstAnswer);
    }

    /** Hello-world started fresh, beside the restored starts: the baseline the goal is stated against. */
    private static Subject freshHello(Subject hello) {
        return new Subject(HELLO_FRESH, hello.name(), hello.handler(), hello.arn(), hello.memoryMb(), hello.timeout(), hello.taskRoot(),
                hello.environment(), hello.jvmOptions());
    }

    /**
     * Hello first (the baseline, with the same options), then with --baselines its SQS and stream
     * variants, with --floor the libraries' floor (metrics; + Postgres; + Redis), then the template's
     * functions, narrowed by --only.
     */
    private static List<Subject> subjects(ColdStartStack stack, Options options, Setup setup, Path work) {
        List<String> only = options.only();
        List<FunctionDefinition> functions = stack.functions();
        if (functions.isEmpty()) {
            throw new IllegalStateException("the template declares no function");
        }
        Path code = TaskRoot.of(setup.code(), setup.jarInLib(), work);
        List<Subject> subjects = new ArrayList<>();
        FunctionDefinition first = functions.getFirst();
        Map<String, String> helloEnvironment = new LinkedHashMap<>();
        first.environment().entrySet().stream().filter(e -> e.getKey().equals("JAVA_TOOL_OPTIONS"))
                .forEach(e -> helloEnvironment.put(e.getKey(), e.getValue()));
        Path helloRoot = TaskRoot.hello(work, options.runtime().resolve("hello-lib"));
        subjects.add(hello(HELLO, HelloFunction.class, first, helloRoot, withToolOptions(helloEnvironment, setup.javaToolOptions()), setup));
        if (options.baselines()) {
            subjects.add(hello("HelloSqs", HelloSqsFunction.class, first, helloRoot, withToolOptions(helloEnvironment, setup.javaToolOptions()), setup));
            subjects.add(hello("HelloStream", HelloStreamFunction.class, first, helloRoot, withToolOptions(helloEnvironment, setup.javaToolOptions()), setup));
        }
        if (options.floor()) {
            Path floorRoot = TaskRoot.floor(code, work);
            var metrics = FloorFunction.Part.METRICS;
            var postgres = FloorFunction.Part.POSTGRES;
            for (var floor : List.of(List.of(metrics), List.of(metrics, postgres), List.of(metrics, postgres, FloorFunction.Part.REDIS))) {
                String logicalId = FLOOR + "-" + FloorFunction.Part.names(floor).replace(',', '+');
                subjects.add(new Subject(logicalId, "runner-floor", FloorFunction.class.getName() + "::handleRequest",
                        "arn:aws:lambda:us-east-1:000000000000:function:runner-floor", first.memoryMb(), first.timeout(), floorRoot,
                        withToolOptions(stack.floorEnvironment(first, floor), setup.javaToolOptions()), setup.jvm()));
            }
        }
        for (FunctionDefinition function : functions) {
            Subject subject = new Subject(function.logicalId(), function.name(), function.handler(), stack.arn(function),
                    function.memoryMb(), function.timeout(), code, withToolOptions(stack.environment(function), setup.javaToolOptions()),
                    setup.jvm());
            if (only.isEmpty() || only.contains(subject.label()) || only.contains(subject.logicalId())) {
                subjects.add(subject);
            }
        }
        return subjects;
    }

    private static Subject hello(String logicalId, Class<?> handler, FunctionDefinition like, Path root,
                                 Map<String, String> environment, Setup setup) {
        String name = "runner-" + logicalId.toLowerCase(Locale.ROOT);
        return new Subject(logicalId, name, handler.getName() + "::handleRequest", "arn:aws:lambda:us-east-1:000000000000:function:" + name,
                like.memoryMb(), like.timeout(), root, environment, setup.jvm());
    }

    private static Map<String, String> withToolOptions(Map<String, String> environment, String javaToolOptions) {
        if (javaToolOptions == null) {
            return environment;
        }
        Map<String, String> changed = new LinkedHashMap<>(environment);
        if (javaToolOptions.isBlank()) {
            changed.remove("JAVA_TOOL_OPTIONS");
        } else {
            changed.put("JAVA_TOOL_OPTIONS", javaToolOptions);
        }
        return changed;
    }

    // ---- the report

    private static void table(List<Result> results) {
        double baseline = results.getFirst().median(LambdaJvm.Sample::totalMs);
        double cpuBaseline = results.getFirst().median(LambdaJvm.Sample::cpuTotalMs);
        System.out.printf("| function | cold start ms | × hello | CPU ms | × hello | init ms (CPU) | 1st invoke ms | 2nd invoke ms | classes init + 1st invoke | answer |%n");
        System.out.printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|%n");
        for (Result result : results) {
            double total = result.median(LambdaJvm.Sample::totalMs);
            double cpu = result.median(LambdaJvm.Sample::cpuTotalMs);
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f | %,.0f | %.2f | %,.0f (%,.0f) | %,.0f | %,.0f | %s | %s |%n", result.subject().label(), total,
                    total / baseline, cpu, cpu / cpuBaseline, result.median(LambdaJvm.Sample::initMs), result.median(LambdaJvm.Sample::cpuInitMs),
                    result.median(LambdaJvm.Sample::firstInvokeMs),
                    result.median(LambdaJvm.Sample::warmMs), result.classes(), answerCell(result, 48));
        }
    }

    /**
     * The restored starts: from CRIU's restore to the first answer, beside hello-world restored and
     * hello-world started fresh (the second row), and that time's parts, each a median: CRIU's restore
     * (which grows with the image), from there to the restored process's first {@code /next} (the
     * runtime client's restore hooks), and the first invocation, with what its connections took to open
     * (each on a thread of its own, from the restore hook on: what the invocation waited for at most).
     * CPU is the restored process's, from the restore on. The image's heap share is read from the
     * process's memory map before the dump ({@link ImageParts}).
     */
    private static void restoredTable(List<Result> results) {
        double restoredHello = results.getFirst().median(LambdaJvm.Sample::totalMs);
        double freshHello = results.get(1).median(LambdaJvm.Sample::totalMs);
        double restoredHelloCpu = results.getFirst().median(LambdaJvm.Sample::cpuTotalMs);
        System.out.printf("| function | restore → answer ms | × hello restored | × hello fresh | CPU ms | × hello restored | restore ms"
                + " | → /next ms | 1st invoke ms | connections opened ms | 2nd invoke ms | init ms (CPU) | image MB (heap) | classes | answer |%n");
        System.out.printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|%n");
        for (Result result : results) {
            double total = result.median(LambdaJvm.Sample::totalMs);
            double cpu = result.median(LambdaJvm.Sample::cpuTotalMs);
            boolean restored = !isFreshHello(result.subject());
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %s | %.2f | %,.0f | %s | %s | %s | %,.0f | %s | %,.0f | %,.0f (%,.0f) | %s | %s | %s |%n",
                    result.subject().label(), total, restored ? String.format(Locale.ROOT, "%.2f", total / restoredHello) : "–",
                    total / freshHello, cpu, restored ? String.format(Locale.ROOT, "%.2f", cpu / restoredHelloCpu) : "–",
                    restored ? String.format(Locale.ROOT, "%,.0f", result.median(s -> s.restore().restoreMs())) : "–",
                    restored ? String.format(Locale.ROOT, "%,.0f", result.median(s -> s.restore().toFirstNextMs())) : "–",
                    result.median(LambdaJvm.Sample::firstInvokeMs), opened(result), result.median(LambdaJvm.Sample::warmMs),
                    result.median(LambdaJvm.Sample::initMs), result.median(LambdaJvm.Sample::cpuInitMs),
                    restored ? String.format(Locale.ROOT, "%,.0f (%s)", result.median(s -> s.restore().imageBytes() / 1e6),
                            heapMb(result)) : "–",
                    restored ? result.classes() : "–", answerCell(result, 40));
        }
    }

    /** The median of what each connection took to open, by part ({@code app.Openers}' line); – if the function opens none. */
    private static String opened(Result result) {
        var parts = result.samples().stream().filter(s -> !s.failed()).flatMap(s -> s.openedMs().keySet().stream())
                .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
        if (parts.isEmpty()) {
            return "–";
        }
        return String.join(", ", parts.stream().map(part -> String.format(Locale.ROOT, "%s %,.0f", part,
                result.median(s -> s.openedMs().getOrDefault(part, -1L)))).toList());
    }

    private static String heapMb(Result result) {
        double heap = result.median(s -> s.restore().heapBytes() / 1e6);
        return heap < 0 ? "?" : String.format(Locale.ROOT, "%,.0f", heap);
    }

    /** A subject's first answer, abbreviated, with its failed starts and a warning when it missed its main path. */
    private static String answerCell(Result result, int width) {
        String answer = result.samples().stream().filter(s -> !s.failed()).findFirst().map(LambdaJvm.Sample::answer).orElse("failed");
        String warning = tookMainPath(answer) ? "" : " **not its main path: fix its event in ColdStartStack**";
        return abbreviate(answer, width) + (result.failures() > 0 ? " (" + result.failures() + " failed)" : "") + warning;
    }

    /** What each restored function still loaded after the restore: what the snapshot's init did not reach. */
    private static void afterTheRestore(List<Result> results, Path work, Path classLists) {
        System.out.printf("%nClasses loaded after the restore (one more start each, logging class loads), by library;"
                + " their names in %s/<function>-after-restore.txt:%n", work);
        for (Result result : results) {
            if (result.log() != null && result.logged().restore() != null) {
                System.out.printf("  %-12s %s%n", result.subject().label(), libraries(result.log().all()));
                try {
                    Files.write(work.resolve(result.subject().label() + "-after-restore.txt"), result.log().classNames());
                    if (classLists != null) {
                        writeClassList(classLists, result);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /**
     * Rewrites the function's list for {@code ClassPriming}, if it has one (a function opts in by
     * having a list): named classes only, a lambda's hidden class has no name to load by.
     */
    private static void writeClassList(Path dir, Result result) throws IOException {
        String handlerClass = result.subject().handler().split("::")[0];
        Path file = dir.resolve(handlerClass.substring(handlerClass.lastIndexOf('.') + 1) + ".classes");
        if (!Files.isRegularFile(file)) {
            return;
        }
        List<String> lines = new ArrayList<>();
        lines.add("# The classes " + result.subject().label() + "'s first invocation loaded after a SnapStart restore, primed before the checkpoint.");
        lines.add("# Written by ColdStart --snapstart --write-class-lists (bench/README.md). A stale list only primes less.");
        // Named classes only (a lambda's hidden class has none), and not the JDK's, which the functions do not prime.
        result.log().classNames().stream().filter(name -> name.indexOf('/') < 0 && !isJdk(name)).distinct().forEach(lines::add);
        Files.createDirectories(dir);
        Files.write(file, lines);
        System.out.printf("  wrote %s (%,d classes)%n", file, lines.size() - 2);
    }

    /**
     * Whether an answer is the success of the path the event was made for: an HTTP answer in 2xx, a
     * batch with no failed message. A refusal (a changed signature scheme, a missing key) would
     * measure a shortcut, not the function.
     */
    static boolean tookMainPath(String answer) {
        try {
            var json = Json.parse(answer);
            if (json.has("statusCode")) {
                return json.path("statusCode").asInt() / 100 == 2;
            }
            if (json.has("batchItemFailures")) {
                return json.path("batchItemFailures").isEmpty();
            }
            if (json.has("Status")) {
                return json.path("Status").asText().equals("SUCCESS");
            }
            // The scheduler answers "fired=N …": a tick that fired nothing skipped the path.
            return !json.asText().startsWith("fired=0");
        } catch (RuntimeException notJson) {
            return !answer.equals("failed");
        }
    }

    private static void comparison(List<Setup> setups, List<List<Result>> results) {
        System.out.printf("%nSetups side by side, cold start ms (× hello of the same setup) / CPU ms (× hello):%n| function |");
        for (int s = 0; s < setups.size(); s++) {
            System.out.printf(" %d: %s |", s + 1, setups.get(s).label());
        }
        System.out.printf("%n|---|%s%n", "---:|".repeat(setups.size()));
        for (int i = 0; i < results.getFirst().size(); i++) {
            System.out.printf("| %s |", results.getFirst().get(i).subject().label());
            for (List<Result> setup : results) {
                double hello = setup.getFirst().median(LambdaJvm.Sample::totalMs);
                double total = setup.get(i).median(LambdaJvm.Sample::totalMs);
                double helloCpu = setup.getFirst().median(LambdaJvm.Sample::cpuTotalMs);
                double cpu = setup.get(i).median(LambdaJvm.Sample::cpuTotalMs);
                System.out.printf(Locale.ROOT, " %,.0f (%.2f) / %,.0f (%.2f) |", total, total / hello, cpu, cpu / helloCpu);
            }
            System.out.println();
        }
    }

    private static void whereItGoes(List<Result> results) {
        System.out.printf("%nWhere it goes (setup 1, one more start each, logging class loads, which slows it a little):%n");
        System.out.printf("  boot = process start → runtime client's main class; client = → handler class loaded;"
                + " handler = → first /next (constructor, event serializer); invoke = → answer%n");
        System.out.printf("  ms per library: each gap between two class loads charged to the library of the later one (a map, not a profile)%n");
        System.out.printf("  slowest steps: the longest stretches between two of Runner's classes loading (what the code after the first spent)%n");
        for (Result result : results) {
            if (result.log() == null) {
                continue;
            }
            var logged = result.logged();
            var log = result.log();
            long client = log.firstLoad(LambdaJvm.MAIN);
            long handler = log.firstLoad(result.subject().handler().split("::")[0]);
            System.out.printf(Locale.ROOT, "%n  %s: %,.0f ms logged = boot %,.0f + client %,.0f + handler %,.0f + invoke %,.0f%n",
                    result.subject().label(), logged.totalMs(), (client - logged.startNanos()) / 1e6, (handler - client) / 1e6,
                    (logged.firstNextNanos() - handler) / 1e6, (logged.answeredNanos() - logged.firstNextNanos()) / 1e6);
            System.out.printf("    init   %s%n", libraries(log.phase(logged.startNanos(), logged.firstNextNanos())));
            System.out.printf("    invoke %s%n", libraries(log.phase(logged.firstNextNanos(), logged.answeredNanos() + 1)));
            System.out.printf("    slowest steps of init:   %s%n", steps(log.slowestSteps(APPLICATION, handler, logged.firstNextNanos(), 4)));
            System.out.printf("    slowest steps of invoke: %s%n", steps(log.slowestSteps(APPLICATION, logged.firstNextNanos(), logged.answeredNanos() + 1, 4)));
        }
        results.stream().filter(r -> r.log() != null).map(r -> r.log().unclaimed()).filter(m -> !m.isEmpty()).reduce((a, b) -> {
            Map<String, Long> merged = new TreeMap<>(a);
            b.forEach((k, v) -> merged.merge(k, v, Math::max));
            return merged;
        }).ifPresent(other -> System.out.printf("%n  \"other\" packages: %s%n", other));
    }

    private static String steps(List<ClassLoadLog.Step> steps) {
        return String.join("; ", steps.stream().map(step -> String.format(Locale.ROOT, "%s %,.0f ms → %s",
                shortName(step.after()), step.millis(), shortName(step.until()))).toList());
    }

    private static String shortName(String className) {
        return className.startsWith(APPLICATION) ? className.substring(APPLICATION.length()) : className;
    }

    private static String libraries(ClassLoadLog.Phase phase) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%,5d classes:", phase.classes()));
        phase.millis().entrySet().stream()
                .sorted(Map.Entry.<ClassLoadLog.Library, Double>comparingByValue(Comparator.reverseOrder()))
                .forEach(e -> line.append(String.format(Locale.ROOT, "  %s %,d ≈%,.0f ms;", e.getKey().label,
                        phase.counts().get(e.getKey()), e.getValue())));
        return line.toString();
    }

    private static String runtimeClient(Path runtime) {
        try (Stream<Path> jars = Files.list(runtime)) {
            return jars.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("aws-lambda-java-runtime-interface-client"))
                    .map(n -> n.replace(".jar", "")).findFirst().orElse("?");
        } catch (IOException e) {
            return "?";
        }
    }

    private static String abbreviate(String text, int max) {
        String flat = text.replaceAll("\\s+", " ");
        return flat.length() <= max ? flat : flat.substring(0, max) + "…";
    }

    private static Path fresh(Path dir) {
        try {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> all = Files.walk(dir)) {
                    all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
