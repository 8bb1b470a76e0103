package dev.runner.log;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.time.Instant;

/**
 * Structured log lines: one JSON object per line on stdout, which CloudWatch Logs Insights reads
 * without an agent. Callers pass fields, never secrets or payloads.
 */
public final class Log {

    private final String component;

    private Log(String component) {
        this.component = component;
    }

    public static Log of(Class<?> owner) {
        return new Log(owner.getSimpleName());
    }

    public void info(String event, Object... fields) {
        write("INFO", event, fields);
    }

    public void warn(String event, Object... fields) {
        write("WARN", event, fields);
    }

    public void error(String event, Object... fields) {
        write("ERROR", event, fields);
    }

    private void write(String level, String event, Object[] fields) {
        ObjectNode line = Json.object();
        line.put("ts", Instant.now().toString());
        line.put("level", level);
        line.put("component", component);
        line.put("event", event);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            Object value = fields[i + 1];
            String key = String.valueOf(fields[i]);
            switch (value) {
                case null -> line.putNull(key);
                case Number number when number instanceof Long || number instanceof Integer -> line.put(key, number.longValue());
                case Number number -> line.put(key, number.doubleValue());
                case Boolean bool -> line.put(key, bool);
                case Throwable error -> line.put(key, error.getClass().getSimpleName() + ": " + error.getMessage());
                default -> line.put(key, value.toString());
            }
        }
        System.out.println(Json.write(line));
    }
}
