package dev.runner.functions.telemetry;

import org.slf4j.event.Level;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which lines are written, and how. A level for everything, and optionally other levels for
 * logger-name prefixes: {@code info}, or {@code warn,dev.runner=info,io.lettuce.core=debug} (the
 * longest matching prefix wins; levels trace, debug, info, warn, error, off). Lines of the
 * {@code plainPrefixes} loggers are plain text for people (the local runtime's own lines); every
 * other line is one JSON object.
 *
 * @param root       the threshold of loggers no prefix matches (an {@link Level#toInt()}, or {@link #OFF})
 * @param byPrefix   thresholds by logger-name prefix
 * @param toStderr   lines go to stderr instead of stdout (Lambda sends both to CloudWatch Logs; the
 *                   local runtime keeps its stdout for the READY line)
 */
public record LogSettings(int root, Map<String, Integer> byPrefix, List<String> plainPrefixes, boolean toStderr) {

    /** The variable the template sets from its LogLevel parameter. */
    public static final String LEVEL_VARIABLE = "RUNNER_LOG_LEVEL";
    /** A system property that wins over {@link #LEVEL_VARIABLE}: for a JVM started by hand. */
    public static final String LEVEL_PROPERTY = "runner.log.level";
    static final int OFF = Integer.MAX_VALUE;

    public static final LogSettings DEFAULT = new LogSettings(Level.INFO.toInt(), Map.of(), List.of(), false);

    public LogSettings {
        byPrefix = Map.copyOf(byPrefix);
        plainPrefixes = List.copyOf(plainPrefixes);
    }

    /** Parses a level spec (see the class comment); a blank one is {@code info}. */
    public static LogSettings parse(String spec, List<String> plainPrefixes) {
        if (spec == null || spec.isBlank()) {
            return new LogSettings(Level.INFO.toInt(), Map.of(), plainPrefixes, false);
        }
        String[] parts = spec.split(",");
        int root = Level.INFO.toInt();
        Map<String, Integer> byPrefix = new LinkedHashMap<>();
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].strip();
            int equals = part.indexOf('=');
            if (equals < 0 && i == 0) {
                root = threshold(part, spec);
            } else if (equals > 0) {
                byPrefix.put(part.substring(0, equals).strip(), threshold(part.substring(equals + 1), spec));
            } else {
                throw new IllegalArgumentException(LEVEL_VARIABLE + " must be a level, then prefix=level pairs, e.g."
                        + " warn,dev.runner=info: " + spec);
            }
        }
        return new LogSettings(root, byPrefix, plainPrefixes, false);
    }

    /** The settings this process starts with: the property, else the variable, else info. */
    static LogSettings fromSystem() {
        String spec = System.getProperty(LEVEL_PROPERTY);
        return parse(spec != null ? spec : System.getenv(LEVEL_VARIABLE), List.of());
    }

    /** The same levels, lines on stderr. */
    public LogSettings onStderr() {
        return new LogSettings(root, byPrefix, plainPrefixes, true);
    }

    /** The lowest level the logger writes ({@link #OFF}: none). */
    int threshold(String loggerName) {
        return byPrefix.entrySet().stream()
                .filter(entry -> loggerName.startsWith(entry.getKey()))
                .max(Comparator.comparingInt(entry -> entry.getKey().length()))
                .map(Map.Entry::getValue)
                .orElse(root);
    }

    boolean plain(String loggerName) {
        return plainPrefixes.stream().anyMatch(loggerName::startsWith);
    }

    private static int threshold(String level, String spec) {
        String name = level.strip().toUpperCase(Locale.ROOT);
        if (name.equals("OFF")) {
            return OFF;
        }
        List<String> known = new ArrayList<>();
        for (Level candidate : Level.values()) {
            if (candidate.name().equals(name)) {
                return candidate.toInt();
            }
            known.add(candidate.name().toLowerCase(Locale.ROOT));
        }
        throw new IllegalArgumentException("unknown log level '" + level.strip() + "' in " + LEVEL_VARIABLE + "=" + spec
                + " (levels: " + String.join(", ", known) + ", off)");
    }
}
