package dev.runner.functions.telemetry;

import org.slf4j.helpers.ThreadLocalMapOfStacks;
import org.slf4j.spi.MDCAdapter;

import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * SLF4J's MDC held per invocation ({@link InvocationLocal}): what a function puts there (request
 * id, function, cold start) is on every line its work logs, whichever thread writes it.
 */
final class InvocationMdc implements MDCAdapter {

    private final InvocationLocal<Map<String, String>> maps = new InvocationLocal<>();
    private final ThreadLocalMapOfStacks stacks = new ThreadLocalMapOfStacks();

    /** The current map, not a copy (never null): for the line being written. */
    Map<String, String> current() {
        Map<String, String> map = maps.get();
        return map == null ? Map.of() : map;
    }

    @Override
    public void put(String key, String value) {
        Map<String, String> next = new HashMap<>(current());
        next.put(key, value);
        maps.set(Collections.unmodifiableMap(next));
    }

    @Override
    public String get(String key) {
        return current().get(key);
    }

    @Override
    public void remove(String key) {
        if (current().containsKey(key)) {
            Map<String, String> next = new HashMap<>(current());
            next.remove(key);
            maps.set(Collections.unmodifiableMap(next));
        }
    }

    @Override
    public void clear() {
        maps.set(null);
    }

    @Override
    public Map<String, String> getCopyOfContextMap() {
        Map<String, String> map = maps.get();
        return map == null ? null : new HashMap<>(map);
    }

    @Override
    public void setContextMap(Map<String, String> contextMap) {
        maps.set(contextMap == null ? null : Collections.unmodifiableMap(new HashMap<>(contextMap)));
    }

    @Override
    public void pushByKey(String key, String value) {
        stacks.pushByKey(key, value);
    }

    @Override
    public String popByKey(String key) {
        return stacks.popByKey(key);
    }

    @Override
    public Deque<String> getCopyOfDequeByKey(String key) {
        return stacks.getCopyOfDequeByKey(key);
    }

    @Override
    public void clearDequeByKey(String key) {
        stacks.clearDequeByKey(key);
    }
}
