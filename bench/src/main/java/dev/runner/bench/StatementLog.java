package dev.runner.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every statement one database role runs, timed by Postgres itself: {@code log_min_duration_statement = 0} for
 * that role, written by Postgres's logging collector to a file of the benchmark's own. pg_stat_statements keeps a
 * mean, a deviation and the longest per statement but no percentiles; this log has each execution's time, so
 * {@link #drain} gives a round's distribution. Only the execute phase is counted (what pg_stat_statements counts as
 * execution time: parse and bind, where a custom plan is made, are logged apart), and bind parameters are not
 * logged. Turning the collector on needs a Postgres restart, which the runtime's functions ride out as in the
 * fault run; it is done before anything is measured.
 */
final class StatementLog implements AutoCloseable {

    /** A statement's executions in one window: their times in ms, sorted. */
    record Times(double[] sortedMillis) {
        int count() {
            return sortedMillis.length;
        }

        double mean() {
            return sortedMillis.length == 0 ? Double.NaN : Arrays.stream(sortedMillis).sum() / sortedMillis.length;
        }

        /** The nearest-rank percentile. */
        double percentile(double p) {
            if (sortedMillis.length == 0) {
                return Double.NaN;
            }
            return sortedMillis[Math.max(0, Math.min(sortedMillis.length - 1, (int) Math.ceil(p / 100 * sortedMillis.length) - 1))];
        }

        double longest() {
            return sortedMillis.length == 0 ? Double.NaN : sortedMillis[sortedMillis.length - 1];
        }
    }

    private static final String FILE = "statements.log";
    private static final String DURATION = "LOG:  duration: ";

    private final Path directory;
    private final Map<String, String> patterns;
    private long position;

    private StatementLog(Path directory, Map<String, String> patterns) {
        this.directory = directory;
        this.patterns = patterns;
    }

    /**
     * Logs every statement of {@code role} from now on, for the statements named in {@code patterns} (name → a
     * LIKE-style pattern, {@code %} any text, over the statement with its whitespace folded).
     */
    static StatementLog start(BenchStack stack, String role, Map<String, String> patterns) {
        Path directory;
        try {
            directory = Files.createTempDirectory("runner-bench-pglog");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        stack.asSuperuser("turn Postgres's statement log on", admin -> {
            try (var statement = admin.createStatement()) {
                statement.execute("alter system set logging_collector = on");
                statement.execute("alter system set log_destination = 'stderr'");
                statement.execute("alter system set log_directory = '" + directory.toAbsolutePath().toString().replace("'", "''") + "'");
                statement.execute("alter system set log_filename = '" + FILE + "'");
                statement.execute("alter system set log_rotation_age = 0");
                statement.execute("alter system set log_rotation_size = 0");
                statement.execute("alter system set log_line_prefix = ''");
                statement.execute("alter system set log_parameter_max_length = 0");
                statement.execute("alter role " + role + " set log_min_duration_statement = 0");
            }
        });
        // The collector starts with the server; every session after it is new, so the role's setting applies to all.
        stack.runtime.restartPostgres(Duration.ZERO);
        stack.postgresRestarted();
        return new StatementLog(directory, new LinkedHashMap<>(patterns));
    }

    /** The executions logged since the last drain (or the start), by pattern name. */
    synchronized Map<String, Times> drain() {
        Map<String, List<Double>> found = new LinkedHashMap<>();
        patterns.keySet().forEach(name -> found.put(name, new ArrayList<>()));
        Path file = directory.resolve(FILE);
        if (Files.exists(file)) {
            String text;
            try (RandomAccessFile log = new RandomAccessFile(file.toFile(), "r")) {
                long end = log.length();
                byte[] bytes = new byte[Math.toIntExact(end - position)];
                log.seek(position);
                log.readFully(bytes);
                // Up to the last whole line: the collector may be mid-entry; the rest is read next time.
                int lastNewline = lastIndexOf(bytes, (byte) '\n');
                text = new String(bytes, 0, lastNewline + 1, StandardCharsets.UTF_8);
                position += lastNewline + 1;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            collect(text, found);
        }
        Map<String, Times> times = new LinkedHashMap<>();
        found.forEach((name, list) -> times.put(name, new Times(list.stream().mapToDouble(Double::doubleValue).sorted().toArray())));
        return times;
    }

    /** Entries start at a line of their own; a statement's further lines are indented by a tab. */
    private void collect(String text, Map<String, List<Double>> found) {
        double millis = -1;
        StringBuilder statement = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (line.startsWith("\t") && millis >= 0) {
                statement.append(' ').append(line);
                continue;
            }
            record(millis, statement, found);
            millis = -1;
            statement.setLength(0);
            if (line.startsWith(DURATION)) {
                int ms = line.indexOf(" ms  execute ");
                if (ms > 0) {
                    millis = Double.parseDouble(line.substring(DURATION.length(), ms));
                    int colon = line.indexOf(": ", ms + " ms  execute ".length());
                    statement.append(colon < 0 ? "" : line.substring(colon + 2));
                }
            }
        }
        record(millis, statement, found);
    }

    private void record(double millis, CharSequence statement, Map<String, List<Double>> found) {
        if (millis < 0) {
            return;
        }
        String folded = statement.toString().replaceAll("\\s+", " ").trim();
        patterns.forEach((name, pattern) -> {
            if (like(folded, pattern)) {
                found.get(name).add(millis);
            }
        });
    }

    /** SQL's LIKE with {@code %} only, case-insensitively. */
    static boolean like(String text, String pattern) {
        String lower = text.toLowerCase(java.util.Locale.ROOT);
        String[] parts = pattern.toLowerCase(java.util.Locale.ROOT).split("%", -1);
        if (!lower.startsWith(parts[0])) {
            return false;
        }
        int at = parts[0].length();
        for (int i = 1; i < parts.length - 1; i++) {
            int found = lower.indexOf(parts[i], at);
            if (found < 0) {
                return false;
            }
            at = found + parts[i].length();
        }
        String last = parts[parts.length - 1];
        return parts.length == 1 ? lower.length() == at : lower.length() - last.length() >= at && lower.endsWith(last);
    }

    private static int lastIndexOf(byte[] bytes, byte wanted) {
        for (int i = bytes.length - 1; i >= 0; i--) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
    }

    /** The log's bytes so far. */
    long bytes() {
        try {
            Path file = directory.resolve(FILE);
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public void close() {
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(directory);
        } catch (IOException ignored) {
            // a temporary directory: left behind at worst
        }
    }
}
