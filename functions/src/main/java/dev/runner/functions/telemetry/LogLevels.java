package dev.runner.functions.telemetry;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Which lines are written: a level for everything, and optionally other levels for logger-name
 * prefixes, {@code info}, or {@code warn,dev.runner=info,io.lettuce.core=debug} (levels trace,
 * debug, info, warn, error, off), applied to Log4j (log4j2.properties writes the lines).
 */
public final class LogLevels {

    /** The variable the template sets from its LogLevel parameter. */
    public static final String LEVEL_VARIABLE = "RUNNER_LOG_LEVEL";
    /** A system property that wins over {@link #LEVEL_VARIABLE}: for a JVM started by hand. */
    public static final String LEVEL_PROPERTY = "runner.log.level";
    private static final List<String> LEVELS = List.of("trace", "debug", "info", "warn", "error", "off");

    private static String applied = "info";
    private static final Set<String> prefixes = new HashSet<>();

    private LogLevels() {}

    /** The levels this process starts with: the property, else the variable, else info; a misspelt spec logs at info and says why. */
    public static void fromSystem() {
        String spec = System.getProperty(LEVEL_PROPERTY, System.getenv(LEVEL_VARIABLE));
        try {
            apply(spec);
        } catch (IllegalArgumentException e) {
            apply("info");
            LogManager.getLogger(LogLevels.class).warn("{}; logging at info", e.getMessage());
        }
    }

    /** Applies {@code spec} (blank: info), replacing what was applied before. */
    public static synchronized void apply(String spec) {
        Map<String, Level> levels = parse(spec);
        Level root = levels.remove("");
        Configurator.setRootLevel(root);
        // A prefix no longer named follows the root again.
        prefixes.stream().filter(prefix -> !levels.containsKey(prefix)).forEach(prefix -> Configurator.setLevel(prefix, root));
        Configurator.setLevel(levels);
        prefixes.addAll(levels.keySet());
        applied = spec == null || spec.isBlank() ? "info" : spec;
    }

    /** The spec applied last. */
    public static synchronized String current() {
        return applied;
    }

    /** The root's level under the empty name, then each prefix's. */
    static Map<String, Level> parse(String spec) {
        Map<String, Level> levels = new LinkedHashMap<>();
        levels.put("", Level.INFO);
        if (spec == null || spec.isBlank()) {
            return levels;
        }
        String[] parts = spec.split(",");
        for (int i = 0; i < parts.length; i++) {
            String part = parts[i].strip();
            int equals = part.indexOf('=');
            if (equals < 0 && i == 0) {
                levels.put("", level(part, spec));
            } else if (equals > 0) {
                levels.put(part.substring(0, equals).strip(), level(part.substring(equals + 1), spec));
            } else {
                throw new IllegalArgumentException(LEVEL_VARIABLE + " must be a level, then prefix=level pairs, e.g."
                        + " warn,dev.runner=info: " + spec);
            }
        }
        return levels;
    }

    private static Level level(String name, String spec) {
        String level = name.strip().toLowerCase(Locale.ROOT);
        if (!LEVELS.contains(level)) {
            throw new IllegalArgumentException("unknown log level '" + name.strip() + "' in " + LEVEL_VARIABLE + "=" + spec
                    + " (levels: " + String.join(", ", LEVELS) + ")");
        }
        return Level.valueOf(level.toUpperCase(Locale.ROOT));
    }
}
