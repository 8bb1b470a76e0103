package dev.runner.functions.telemetry;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One line per log event on stdout (or stderr), where Lambda sends it to CloudWatch Logs: a JSON object
 * (timestamp, level, logger, message, the invocation's context from the MDC, the event's
 * key-value fields, its stack trace), or, for the loggers the settings name, a plain line for people.
 */
final class LogLines {

    private static final JsonFactory JSON = new JsonFactory();
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneId.systemDefault());
    private static final Set<String> RESERVED = Set.of("timestamp", "level", "logger", "message", "stack_trace");
    /** The MDC key whose value is written as a JSON boolean. */
    static final String COLD_START = "cold_start";

    private LogLines() {}

    /** Writes the line; a failure to format it never reaches the caller (it is told on stderr). */
    static void write(boolean plain, boolean toStderr, String logger, Level level, String message, Map<String, String> context,
                      List<KeyValuePair> fields, Throwable error) {
        try {
            String line = plain ? plain(Instant.now(), logger, level, message, fields, error)
                    : json(Instant.now(), logger, level, message, context, fields, error);
            (toStderr ? System.err : System.out).println(line);
        } catch (RuntimeException e) {
            System.err.println("log line of " + logger + " not written: " + e);
        }
    }

    static String json(Instant time, String logger, Level level, String message, Map<String, String> context,
                       List<KeyValuePair> fields, Throwable error) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator json = JSON.createGenerator(out)) {
            json.writeStartObject();
            json.writeStringField("timestamp", time.toString());
            json.writeStringField("level", level.name());
            json.writeStringField("logger", logger);
            json.writeStringField("message", String.valueOf(message));
            for (var entry : context.entrySet()) {
                if (entry.getKey().equals(COLD_START)) {
                    json.writeBooleanField(COLD_START, Boolean.parseBoolean(entry.getValue()));
                } else {
                    json.writeStringField(entry.getKey(), entry.getValue());
                }
            }
            for (KeyValuePair field : fields) {
                // A field never hides what every line has.
                boolean taken = RESERVED.contains(field.key) || context.containsKey(field.key);
                json.writeFieldName(taken ? "field." + field.key : field.key);
                value(json, field.value);
            }
            if (error != null) {
                json.writeStringField("stack_trace", stackTrace(error));
            }
            json.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    static String plain(Instant time, String logger, Level level, String message, List<KeyValuePair> fields, Throwable error) {
        Thread thread = Thread.currentThread();
        String threadName = thread.getName().isEmpty() ? "virtual-" + thread.threadId() : thread.getName();
        var line = new StringBuilder(128).append(CLOCK.format(time)).append(" [").append(threadName).append("] ")
                .append(level.name()).append(' ').append(logger).append(" - ").append(message);
        fields.forEach(field -> line.append(' ').append(field.key).append('=').append(field.value));
        if (error != null) {
            line.append(System.lineSeparator()).append(stackTrace(error).stripTrailing());
        }
        return line.toString();
    }

    private static void value(JsonGenerator json, Object value) throws IOException {
        switch (value) {
            case null -> json.writeNull();
            case Integer number -> json.writeNumber(number);
            case Long number -> json.writeNumber(number);
            case Short number -> json.writeNumber(number);
            case Byte number -> json.writeNumber(number);
            case Double number when Double.isFinite(number) -> json.writeNumber(number);
            case Float number when Float.isFinite(number) -> json.writeNumber(number);
            case BigDecimal number -> json.writeNumber(number);
            case BigInteger number -> json.writeNumber(number);
            case Boolean bool -> json.writeBoolean(bool);
            case Throwable error -> json.writeString(error.getClass().getSimpleName() + ": " + error.getMessage());
            case Collection<?> values -> {
                json.writeStartArray();
                for (Object element : values) {
                    value(json, element);
                }
                json.writeEndArray();
            }
            case Object[] values -> value(json, java.util.Arrays.asList(values));
            default -> json.writeString(value.toString());
        }
    }

    private static String stackTrace(Throwable error) {
        StringWriter trace = new StringWriter(1024);
        error.printStackTrace(new PrintWriter(trace));
        return trace.toString();
    }
}
