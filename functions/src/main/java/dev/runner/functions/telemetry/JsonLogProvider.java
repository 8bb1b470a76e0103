package dev.runner.functions.telemetry;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one logging path of the functions: every SLF4J logger in the JVM (Runner's, and Lettuce's,
 * Hikari's, Flyway's, the AWS SDK's) writes through here, one JSON object per line on stdout, with
 * the invocation's context from the MDC ({@code Invocation} puts the request id, the function, its
 * version and whether the start was cold). Found by SLF4J's service loader
 * (META-INF/services/org.slf4j.spi.SLF4JServiceProvider). A few classes instead of a logging
 * framework: Log4j 2 with its JSON layout loads over a thousand classes more at a cold start.
 *
 * <p>Levels come from {@link LogSettings#LEVEL_VARIABLE} (default info) and can be changed at run
 * time with {@link #configure} (the local runtime does, before its first line).
 */
public final class JsonLogProvider implements SLF4JServiceProvider {

    private static volatile LogSettings settings = initialSettings();

    private final InvocationMdc mdc = new InvocationMdc();
    private final Map<String, Logger> loggers = new ConcurrentHashMap<>();
    private final ILoggerFactory factory = name -> loggers.computeIfAbsent(name, n -> new JsonLogger(n, mdc));
    private final IMarkerFactory markers = new BasicMarkerFactory();

    /** Replaces the settings; every logger follows from its next line on. */
    public static void configure(LogSettings replacement) {
        settings = replacement;
    }

    public static LogSettings settings() {
        return settings;
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // Everything is built with the instance.
    }

    /** A misspelt level must not stop the function: it logs at info and says why, once. */
    private static LogSettings initialSettings() {
        try {
            return LogSettings.fromSystem();
        } catch (IllegalArgumentException e) {
            LogLines.write(false, false, JsonLogProvider.class.getName(), Level.WARN, e.getMessage() + "; logging at info", Map.of(),
                    List.of(), null);
            return LogSettings.DEFAULT;
        }
    }
}
