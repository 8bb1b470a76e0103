package dev.runner.log;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Runner's log lines: an event name and its fields, through SLF4J like every library's lines, so
 * one provider writes them all (the functions' writes one JSON object per line on stdout, which
 * CloudWatch Logs Insights reads without an agent). Fields are SLF4J key-value pairs: numbers and
 * booleans stay typed; a {@link Throwable} is summarised in its field and attached as the line's
 * cause, so its stack trace is written too. Callers pass fields, never secrets or payloads.
 */
public final class Log {

    private final Logger logger;

    private Log(Logger logger) {
        this.logger = logger;
    }

    public static Log of(Class<?> owner) {
        return new Log(LoggerFactory.getLogger(owner));
    }

    public void info(String event, Object... fields) {
        if (logger.isInfoEnabled()) {
            write(logger.atInfo(), event, fields);
        }
    }

    public void warn(String event, Object... fields) {
        if (logger.isWarnEnabled()) {
            write(logger.atWarn(), event, fields);
        }
    }

    public void error(String event, Object... fields) {
        if (logger.isErrorEnabled()) {
            write(logger.atError(), event, fields);
        }
    }

    private static void write(LoggingEventBuilder line, String event, Object[] fields) {
        for (int i = 0; i + 1 < fields.length; i += 2) {
            String key = String.valueOf(fields[i]);
            Object value = fields[i + 1];
            if (value instanceof Throwable error) {
                line.setCause(error);
                value = error.getClass().getSimpleName() + ": " + error.getMessage();
            }
            line.addKeyValue(key, value);
        }
        line.log(event);
    }
}
