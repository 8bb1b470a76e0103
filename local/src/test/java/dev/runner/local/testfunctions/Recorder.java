package dev.runner.local.testfunctions;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the test functions received, by function name: the hand-written fake the wiring tests read. */
public final class Recorder {

    /** One invocation as the function saw it. */
    public record Invocation(Object event, Map<String, String> environment, int remainingMillis, String functionName,
                             Instant at) {
        public Invocation(Object event, Map<String, String> environment, int remainingMillis, String functionName) {
            this(event, environment, remainingMillis, functionName, Instant.now());
        }
    }

    private static final Map<String, List<Invocation>> INVOCATIONS = new ConcurrentHashMap<>();

    private Recorder() {}

    static void record(String functionName, Invocation invocation) {
        INVOCATIONS.computeIfAbsent(functionName, k -> new CopyOnWriteArrayList<>()).add(invocation);
    }

    public static List<Invocation> of(String functionName) {
        return INVOCATIONS.getOrDefault(functionName, List.of());
    }
}
