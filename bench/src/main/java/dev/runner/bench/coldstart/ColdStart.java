package dev.runner.bench.coldstart;

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
import java.util.stream.Stream;

/**
 * The cold-start benchmark (../shared/spec/BENCH.md, "cold start"): every function of
 * template.yaml started as Lambda starts it, in a fresh JVM through the AWS Lambda runtime
 * interface client against a local Runtime API, from process start to its answer to one event
 * (init + first invocation), beside a hello-world handler started the same way. A second event
 * to the same process shows the warm cost: what the first invocation pays above it is what
 * SnapStart priming could move into the snapshot. One more start per function logs class loading
 * and shows where init goes. Prints figures; asserts nothing.
 *
 * <pre>
 * java -cp bench/target/runner-bench.jar dev.runner.bench.coldstart.ColdStart [--reps 5] [--only ItemWorker,Api]
 *      [--code functions/target/runner-functions.jar | DIR | ZIP] [--jar-in-lib]
 *      [--java-tool-options "…"] [--jvm "-XX:…"] [--no-classes]
 * </pre>
 * Run from the project directory (template.yaml, events/, bench/target/lambda-runtime).
 */
public final class ColdStart {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String HELLO = "Hello";

    /** The command line. */
    record Options(int reps, List<String> only, Path code, boolean jarInLib, String javaToolOptions, List<String> jvm,
                   boolean classes, Path template, Path events, Path runtime, Path work) {

        static Options parse(String[] args) {
            int reps = 5;
            List<String> only = List.of();
            Path code = Path.of("functions/target/runner-functions.jar");
            boolean jarInLib = false;
            String javaToolOptions = null;
            List<String> jvm = List.of();
            boolean classes = true;
            for (int i = 0; i < args.length; i++) {
                String arg = args[i];
                switch (arg) {
                    case "--reps" -> reps = Integer.parseInt(value(args, ++i, arg));
                    case "--only" -> only = Arrays.asList(value(args, ++i, arg).split(","));
                    case "--code" -> code = Path.of(value(args, ++i, arg));
                    case "--jar-in-lib" -> jarInLib = true;
                    case "--java-tool-options" -> javaToolOptions = value(args, ++i, arg);
                    case "--jvm" -> jvm = Arrays.stream(value(args, ++i, arg).trim().split("\\s+")).filter(s -> !s.isEmpty()).toList();
                    case "--no-classes" -> classes = false;
                    default -> throw new IllegalArgumentException("unknown argument " + arg
                            + "; usage: [--reps N] [--only A,B] [--code JAR|ZIP|DIR] [--jar-in-lib] [--java-tool-options \"…\"] [--jvm \"…\"] [--no-classes]");
                }
            }
            if (reps < 1) {
                throw new IllegalArgumentException("--reps < 1: " + reps);
            }
            return new Options(reps, only, code, jarInLib, javaToolOptions, jvm, classes, Path.of("template.yaml"),
                    Path.of("events"), Path.of("bench/target/lambda-runtime"), Path.of("bench/target/coldstart"));
        }

        private static String value(String[] args, int i, String name) {
            if (i >= args.length) {
                throw new IllegalArgumentException(name + " needs a value");
            }
            return args[i];
        }
    }

    /** One subject's figures: the timed starts and the logged one. */
    record Result(Subject subject, List<LambdaJvm.Sample> samples, LambdaJvm.Sample logged, ClassLoadLog log) {
        double median(java.util.function.ToDoubleFunction<LambdaJvm.Sample> figure) {
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

    static List<Result> run(Options options) {
        Path work = fresh(options.work());
        LambdaJvm jvm = LambdaJvm.locate(options.runtime(), options.jvm());
        try (var stack = ColdStartStack.start(options.template(), options.events()); var api = RuntimeApi.start()) {
            List<Subject> subjects = subjects(stack, options, work);
            System.out.printf("%nCold start: %d functions and a hello-world handler, each in a fresh JVM through the Lambda runtime"
                    + " interface client (%s), %d starts each (median)%n", subjects.size() - 1, runtimeClient(options.runtime()), options.reps());
            System.out.printf("  JVM %s; the java21 runtime's options + JAVA_TOOL_OPTIONS=%s%s%n", Runtime.version(),
                    subjects.getFirst().environment().getOrDefault("JAVA_TOOL_OPTIONS", "(unset)"),
                    options.jvm().isEmpty() ? "" : " + " + String.join(" ", options.jvm()));
            System.out.printf("  code: %s %s%n", options.code(), Files.isDirectory(options.code()) ? "(a task root as it is)"
                    : options.jarInLib() ? "(kept whole in lib/, as a zip of jars loads)" : "(unpacked into the task root, as Lambda does)");

            // The first start pays for the page cache and this JVM's own warm-up: not counted.
            jvm.run(subjects.getFirst(), List.of(stack.event(HELLO, api.cfnResponseUrl())), api, List.of(), work.resolve("warmup.log"), TIMEOUT);
            Map<Subject, List<LambdaJvm.Sample>> samples = new LinkedHashMap<>();
            for (int rep = 1; rep <= options.reps(); rep++) {
                for (Subject subject : subjects) {
                    var sample = start(jvm, stack, api, subject, List.of(), work.resolve(subject.label() + "-" + rep + ".log"));
                    samples.computeIfAbsent(subject, s -> new ArrayList<>()).add(sample);
                    if (sample.failed()) {
                        System.out.printf("  %s start %d failed: %s%n", subject.label(), rep, abbreviate(sample.answer(), 300));
                    }
                }
            }
            List<Result> results = new ArrayList<>();
            for (Subject subject : subjects) {
                LambdaJvm.Sample logged = null;
                ClassLoadLog log = null;
                if (options.classes()) {
                    Path file = work.resolve(subject.label() + "-classes.log");
                    logged = start(jvm, stack, api, subject, List.of(ClassLoadLog.option(file)), work.resolve(subject.label() + "-logged.log"));
                    log = logged.failed() ? null : ClassLoadLog.read(file);
                }
                results.add(new Result(subject, samples.get(subject), logged, log));
            }
            print(results);
            return results;
        }
    }

    private static LambdaJvm.Sample start(LambdaJvm jvm, ColdStartStack stack, RuntimeApi api, Subject subject,
                                          List<String> diagnostics, Path log) {
        List<String> events = List.of(stack.event(subject.logicalId(), api.cfnResponseUrl()),
                stack.event(subject.logicalId(), api.cfnResponseUrl()));
        return jvm.run(subject, events, api, diagnostics, log, TIMEOUT);
    }

    /** Hello first (the baseline), then the template's functions, narrowed by --only. */
    private static List<Subject> subjects(ColdStartStack stack, Options options, Path work) {
        List<FunctionDefinition> functions = stack.functions();
        if (functions.isEmpty()) {
            throw new IllegalStateException(options.template() + " declares no function");
        }
        Path code = TaskRoot.of(options.code(), options.jarInLib(), work);
        List<Subject> subjects = new ArrayList<>();
        FunctionDefinition first = functions.getFirst();
        Map<String, String> helloEnvironment = new LinkedHashMap<>();
        String javaToolOptions = options.javaToolOptions() != null ? options.javaToolOptions() : first.environment().get("JAVA_TOOL_OPTIONS");
        if (javaToolOptions != null && !javaToolOptions.isBlank()) {
            helloEnvironment.put("JAVA_TOOL_OPTIONS", javaToolOptions);
        }
        subjects.add(new Subject(HELLO, "runner-hello", HelloFunction.class.getName() + "::handleRequest",
                "arn:aws:lambda:us-east-1:000000000000:function:runner-hello", first.memoryMb(), first.timeout(),
                TaskRoot.hello(work), helloEnvironment));
        for (FunctionDefinition function : functions) {
            Subject subject = new Subject(function.logicalId(), function.name(), function.handler(), stack.arn(function),
                    function.memoryMb(), function.timeout(), code, withToolOptions(stack.environment(function), options.javaToolOptions()));
            if (options.only().isEmpty() || options.only().contains(subject.label()) || options.only().contains(subject.logicalId())) {
                subjects.add(subject);
            }
        }
        return subjects;
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

    private static void print(List<Result> results) {
        Result hello = results.getFirst();
        double baseline = hello.median(LambdaJvm.Sample::totalMs);
        System.out.printf("%n| function | cold start ms | × hello | init ms | 1st invoke ms | 2nd invoke ms | classes init + 1st invoke | answer |%n");
        System.out.printf("|---|---:|---:|---:|---:|---:|---:|---|%n");
        for (Result result : results) {
            double total = result.median(LambdaJvm.Sample::totalMs);
            String classes = result.log() == null ? "–" : String.format(Locale.ROOT, "%,d + %,d",
                    result.log().phase(result.logged().startNanos(), result.logged().firstNextNanos()).classes(),
                    result.log().phase(result.logged().firstNextNanos(), result.logged().answeredNanos() + 1).classes());
            String answer = result.samples().stream().filter(s -> !s.failed()).findFirst().map(LambdaJvm.Sample::answer).orElse("failed");
            System.out.printf(Locale.ROOT, "| %s | %,.0f | %.2f | %,.0f | %,.0f | %,.0f | %s | %s%s |%n", result.subject().label(), total,
                    total / baseline, result.median(LambdaJvm.Sample::initMs), result.median(LambdaJvm.Sample::firstInvokeMs),
                    result.median(LambdaJvm.Sample::warmMs), classes, abbreviate(answer, 60),
                    result.failures() > 0 ? " (" + result.failures() + " failed)" : "");
        }
        System.out.printf("%nWhere it goes (one more start each, logging class loads, which slows it a little):%n");
        System.out.printf("  boot = process start → runtime client's main class; client = → handler class loaded;"
                + " handler = → first /next (constructor, event serializer); invoke = → answer%n");
        System.out.printf("  ms per library: each gap between two class loads charged to the library of the later one (a map, not a profile)%n");
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
        }
        results.stream().filter(r -> r.log() != null).map(r -> r.log().unclaimed()).filter(m -> !m.isEmpty()).reduce((a, b) -> {
            Map<String, Long> merged = new java.util.TreeMap<>(a);
            b.forEach((k, v) -> merged.merge(k, v, Math::max));
            return merged;
        }).ifPresent(other -> System.out.printf("%n  \"other\" packages: %s%n", other));
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
