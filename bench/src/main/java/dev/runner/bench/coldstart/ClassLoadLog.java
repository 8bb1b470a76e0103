package dev.runner.bench.coldstart;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The classes one JVM loaded and when, from {@code -Xlog:class+load} with the {@code tn}
 * decoration (System.nanoTime, the same clock as the benchmark's): counted by library, split at
 * the end of init, with the init time spread over the libraries. That spread charges each gap
 * between two loads to the library of the class loaded after it, so a library's figure is the
 * time from the previous load to each of its own: its class loading and the code that led to it.
 * A rough map, good for ranking where init goes, not a profile.
 */
final class ClassLoadLog {

    /** Libraries by package prefix, first match wins. */
    enum Library {
        RUNNER("Runner", "dev.runner."),
        AWS_SDK("AWS SDK", "software.amazon.awssdk.", "software.amazon.eventstream."),
        LETTUCE("Lettuce", "io.lettuce."),
        NETTY("Netty", "io.netty."),
        REACTOR("Reactor", "reactor.", "org.reactivestreams."),
        JACKSON("Jackson", "com.fasterxml.jackson."),
        HIKARI("HikariCP", "com.zaxxer.hikari."),
        PGJDBC("pgjdbc", "org.postgresql."),
        FLYWAY("Flyway", "org.flywaydb."),
        SLF4J("SLF4J", "org.slf4j."),
        JODA("Joda-Time", "org.joda.time."),
        LAMBDA_RUNTIME("Lambda runtime client", "com.amazonaws.services.lambda.runtime.api.", "com.amazonaws.services.lambda.crac.",
                "com.amazonaws.services.lambda.runtime.serialization.", "com.amazonaws.lambda.thirdparty.", "software.amazon.awssdk.utilslite."),
        LAMBDA_EVENTS("Lambda core/events", "com.amazonaws.services.lambda.runtime."),
        JDK("JDK", "java.", "javax.", "jdk.", "sun.", "com.sun."),
        OTHER("other");

        final String label;
        private final String[] prefixes;

        Library(String label, String... prefixes) {
            this.label = label;
            this.prefixes = prefixes;
        }

        static Library of(String className) {
            for (Library library : values()) {
                for (String prefix : library.prefixes) {
                    if (className.startsWith(prefix)) {
                        return library;
                    }
                }
            }
            return OTHER;
        }
    }

    /** One class loaded, at System.nanoTime. */
    record Load(long nanos, String className) {}

    /** What one phase loaded: classes and charged ms per library. */
    record Phase(int classes, Map<Library, Integer> counts, Map<Library, Double> millis) {}

    private final List<Load> loads;

    private ClassLoadLog(List<Load> loads) {
        this.loads = loads;
    }

    /** The JVM option that writes the log this class reads. */
    static String option(Path file) {
        return "-Xlog:class+load=info:file=" + file.toAbsolutePath() + ":tn";
    }

    static ClassLoadLog read(Path file) {
        return read(file, 0, Long.MAX_VALUE);
    }

    /**
     * The loads logged between two positions in the file, {@code from} up to {@code to}: after a
     * restore, whose clock CRIU shifts (the restored process sees its monotonic clock go on from
     * the checkpoint), only the file's position tells what was loaded after it.
     */
    static ClassLoadLog read(Path file, long from, long to) {
        List<Load> loads = new ArrayList<>();
        String text;
        try {
            byte[] bytes = Files.readAllBytes(file);
            int start = (int) Math.min(from, bytes.length);
            int end = (int) Math.min(to, bytes.length);
            text = new String(bytes, start, Math.max(0, end - start), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (Stream<String> lines = text.lines()) {
            lines.forEach(line -> {
                int end = line.indexOf("ns] ");
                if (line.startsWith("[") && end > 0) {
                    String rest = line.substring(end + 4);
                    int space = rest.indexOf(' ');
                    loads.add(new Load(Long.parseLong(line.substring(1, end)), space < 0 ? rest : rest.substring(0, space)));
                }
            });
        }
        return new ClassLoadLog(loads);
    }

    /** The classes' names, in the order they loaded. */
    List<String> classNames() {
        return loads.stream().map(Load::className).toList();
    }

    /** Every class the log holds, gaps charged from the first load on. */
    Phase all() {
        return loads.isEmpty() ? phase(0, 0) : phase(loads.getFirst().nanos(), Long.MAX_VALUE);
    }

    /** Classes loaded in [from, to), gaps charged from {@code from} on. */
    Phase phase(long from, long to) {
        Map<Library, Integer> counts = new EnumMap<>(Library.class);
        Map<Library, Double> millis = new EnumMap<>(Library.class);
        long previous = from;
        int classes = 0;
        for (Load load : loads) {
            if (load.nanos() < from || load.nanos() >= to) {
                continue;
            }
            Library library = Library.of(load.className());
            counts.merge(library, 1, Integer::sum);
            millis.merge(library, (load.nanos() - previous) / 1e6, Double::sum);
            previous = load.nanos();
            classes++;
        }
        return new Phase(classes, counts, millis);
    }

    /** A stretch between two classes of the application loading: what the code after the first one cost. */
    record Step(String after, String until, double millis) {}

    /**
     * The longest stretches of [from, to) between consecutive loads of classes under {@code prefix}
     * (the application's own): each is the time its code spent in libraries and the JDK before it
     * needed its next class, so the longest point at the expensive steps of a constructor or a call.
     */
    List<Step> slowestSteps(String prefix, long from, long to, int count) {
        List<Step> steps = new ArrayList<>();
        Load previous = null;
        for (Load load : loads) {
            if (load.nanos() < from || load.nanos() >= to || !load.className().startsWith(prefix) || load.className().contains("$$Lambda")) {
                continue;
            }
            if (previous != null) {
                steps.add(new Step(previous.className(), load.className(), (load.nanos() - previous.nanos()) / 1e6));
            }
            previous = load;
        }
        if (previous != null) {
            steps.add(new Step(previous.className(), "the end of the phase", (to - previous.nanos()) / 1e6));
        }
        return steps.stream().sorted(Comparator.comparingDouble(Step::millis).reversed()).limit(count).toList();
    }

    /** When the first class whose name starts with the prefix loaded; -1 if none did. */
    long firstLoad(String prefix) {
        return loads.stream().filter(l -> l.className().startsWith(prefix)).mapToLong(Load::nanos).min().orElse(-1);
    }

    /** Packages (first three segments) of the classes no library claims, most first: what to add to {@link Library}. */
    Map<String, Long> unclaimed() {
        Map<String, Long> packages = new TreeMap<>();
        for (Load load : loads) {
            if (Library.of(load.className()) == Library.OTHER) {
                String[] parts = load.className().split("\\.");
                packages.merge(String.join(".", Arrays.copyOf(parts, Math.min(3, parts.length - 1))), 1L, Long::sum);
            }
        }
        return packages;
    }
}
