package dev.runner.functions.telemetry;

import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventAware;

import java.util.List;

/**
 * A logger of {@link JsonLogProvider}: classic calls ({@code log.warn("… {}", x, e)}) and fluent
 * ones with key-value pairs ({@code log.atInfo().addKeyValue(…)}, what {@code dev.runner.log.Log}
 * uses) end as the same line. Its level follows the provider's settings, read again when they change.
 */
final class JsonLogger extends LegacyAbstractLogger implements LoggingEventAware {

    /** What the settings say of this logger, with the settings it was read from. */
    private record Resolved(LogSettings settings, int threshold, boolean plain, boolean toStderr) {}

    private final InvocationMdc mdc;
    private volatile Resolved resolved = new Resolved(null, 0, false, false);

    JsonLogger(String name, InvocationMdc mdc) {
        this.name = name;
        this.mdc = mdc;
    }

    @Override
    public boolean isTraceEnabled() {
        return enabled(Level.TRACE);
    }

    @Override
    public boolean isDebugEnabled() {
        return enabled(Level.DEBUG);
    }

    @Override
    public boolean isInfoEnabled() {
        return enabled(Level.INFO);
    }

    @Override
    public boolean isWarnEnabled() {
        return enabled(Level.WARN);
    }

    @Override
    public boolean isErrorEnabled() {
        return enabled(Level.ERROR);
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments, Throwable error) {
        Resolved current = resolved;
        LogLines.write(current.plain(), current.toStderr(), name, level, MessageFormatter.basicArrayFormat(pattern, arguments), mdc.current(), List.of(), error);
    }

    @Override
    public void log(LoggingEvent event) {
        if (!enabled(event.getLevel())) {
            return;
        }
        Object[] arguments = event.getArgumentArray();
        String message = arguments == null || arguments.length == 0 ? event.getMessage()
                : MessageFormatter.basicArrayFormat(event.getMessage(), arguments);
        List<KeyValuePair> fields = event.getKeyValuePairs() == null ? List.of() : event.getKeyValuePairs();
        Resolved current = resolved;
        LogLines.write(current.plain(), current.toStderr(), name, event.getLevel(), message, mdc.current(), fields, event.getThrowable());
    }

    private boolean enabled(Level level) {
        LogSettings settings = JsonLogProvider.settings();
        Resolved current = resolved;
        if (current.settings() != settings) {
            current = new Resolved(settings, settings.threshold(name), settings.plain(name), settings.toStderr());
            resolved = current;
        }
        return level.toInt() >= current.threshold();
    }
}
