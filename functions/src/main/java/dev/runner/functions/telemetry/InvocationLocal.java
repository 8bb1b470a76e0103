package dev.runner.functions.telemetry;

/**
 * A value of the invocation running on this thread, seen by the threads it starts: handler calls
 * on virtual threads, and the I/O threads a client starts on first use. Those threads share the
 * slot of the thread that started them instead of copying its value (as an InheritableThreadLocal
 * would), so a pooled thread born during the first invocation shows the current invocation's
 * request id, never the first one's forever. A thread that sets a value takes a slot of its own,
 * so two threads that each run invocations (the local runtime's pollers) never see each other's.
 */
final class InvocationLocal<T> {

    private static final class Slot<T> {
        private final Thread owner = Thread.currentThread();
        private volatile T value;
    }

    private final InheritableThreadLocal<Slot<T>> slots = new InheritableThreadLocal<>();

    /** This thread's value, or the value of the thread that started it; null when none. */
    T get() {
        Slot<T> slot = slots.get();
        return slot == null ? null : slot.value;
    }

    /** Whether this thread set the value it sees (or none is set), rather than sharing the one of the thread that started it. */
    boolean ownedHere() {
        Slot<T> slot = slots.get();
        return slot == null || slot.owner == Thread.currentThread();
    }

    /** Sets this thread's value (null clears it), for the threads it started as well. */
    void set(T value) {
        Slot<T> slot = slots.get();
        if (slot == null || slot.owner != Thread.currentThread()) {
            slot = new Slot<>();
            slots.set(slot);
        }
        slot.value = value;
    }
}
