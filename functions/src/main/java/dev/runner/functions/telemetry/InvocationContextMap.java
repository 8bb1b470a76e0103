package dev.runner.functions.telemetry;

import org.apache.logging.log4j.spi.CleanableThreadContextMap;
import org.apache.logging.log4j.spi.CopyOnWrite;
import org.apache.logging.log4j.spi.ReadOnlyThreadContextMap;
import org.apache.logging.log4j.util.SortedArrayStringMap;
import org.apache.logging.log4j.util.StringMap;

import java.util.Collections;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Log4j's thread context (SLF4J's MDC, where Powertools puts the request id and the function) held
 * per invocation ({@link InvocationLocal}): what the invocation's thread puts there is on every
 * line its work logs, whichever thread writes it (the handler calls' virtual threads, the clients'
 * I/O threads), and never a past invocation's. A thread sharing its starter's context that writes
 * its own entries (SLF4J's key-value pairs pass through the context for the length of a line)
 * keeps them apart, for itself only. Named by {@code log4j2.threadContextMap}
 * (log4j2.component.properties). Copy on write: each change makes a new frozen map, which the
 * lines being written keep reading.
 */
public final class InvocationContextMap implements CleanableThreadContextMap, ReadOnlyThreadContextMap, CopyOnWrite {

    private static final StringMap EMPTY = frozen(new SortedArrayStringMap(0));
    /** The invocation's context, shared with the threads its thread starts. */
    private static final InvocationLocal<StringMap> SHARED = new InvocationLocal<>();
    /** A sharing thread's own entries, over the shared ones. */
    private static final ThreadLocal<StringMap> OWN = new ThreadLocal<>();

    /** Log4j's constructor. */
    public InvocationContextMap() {}

    /** For the thread starting an invocation: an empty context of its own, which the threads it starts share. */
    public static void startHere() {
        SHARED.set(null);
        OWN.remove();
    }

    @Override
    public StringMap getReadOnlyContextData() {
        StringMap shared = SHARED.get();
        StringMap own = OWN.get();
        if (own == null) {
            return shared == null ? EMPTY : shared;
        }
        StringMap both = new SortedArrayStringMap(shared == null ? EMPTY : shared);
        both.putAll(own);
        return frozen(both);
    }

    @Override
    public void put(String key, String value) {
        change(map -> map.putValue(key, value));
    }

    @Override
    public void putAll(Map<String, String> values) {
        change(map -> values.forEach(map::putValue));
    }

    @Override
    public void remove(String key) {
        change(map -> map.remove(key));
    }

    @Override
    public void removeAll(Iterable<String> keys) {
        change(map -> keys.forEach(map::remove));
    }

    @Override
    public void clear() {
        if (SHARED.ownedHere()) {
            SHARED.set(null);
        }
        OWN.remove();
    }

    @Override
    public String get(String key) {
        return getReadOnlyContextData().getValue(key);
    }

    @Override
    public boolean containsKey(String key) {
        return getReadOnlyContextData().containsKey(key);
    }

    @Override
    public Map<String, String> getCopy() {
        return getReadOnlyContextData().toMap();
    }

    @Override
    public Map<String, String> getImmutableMapOrNull() {
        StringMap map = getReadOnlyContextData();
        return map.isEmpty() ? null : Collections.unmodifiableMap(map.toMap());
    }

    @Override
    public boolean isEmpty() {
        return getReadOnlyContextData().isEmpty();
    }

    /** The owner's change goes to the shared context; a sharing thread's to its own entries, dropped once empty. */
    private static void change(Consumer<StringMap> edit) {
        if (SHARED.ownedHere()) {
            StringMap shared = SHARED.get();
            StringMap next = new SortedArrayStringMap(shared == null ? EMPTY : shared);
            edit.accept(next);
            SHARED.set(frozen(next));
            return;
        }
        StringMap own = OWN.get();
        StringMap next = new SortedArrayStringMap(own == null ? EMPTY : own);
        edit.accept(next);
        if (next.isEmpty()) {
            OWN.remove();
        } else {
            OWN.set(frozen(next));
        }
    }

    private static StringMap frozen(StringMap map) {
        map.freeze();
        return map;
    }
}
