package dev.runner.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

/**
 * Runs one handler's calls of a batch through {@code lanes} lanes: each lane takes the next call
 * when its last one ends, so a handler limited to k calls in flight is kept at k while the batch
 * lasts instead of the rest being sent back to wait. A lane with no call left says so at once
 * ({@link Call#laneFreed}) while others still run, so its lease can go back before the batch ends.
 * A call starts only while it can still end before the deadline (its expected duration, twice,
 * fits), and none starts after a call found the endpoint down: what does not start is handed back
 * unstarted. A call still running at the deadline ends as {@code late}. Pure scheduling, no I/O of
 * its own.
 *
 * @param <C> a call (the items it carries)
 * @param <R> its result
 */
final class Lanes<C, R> {

    /**
     * How every call of a group ended: results of the calls made, in no particular order, the calls
     * never started, and those held off (not made, with how long the caller asked them to wait).
     */
    record Ran<C, R>(List<R> results, List<C> unstarted, boolean stoppedByFailure, Map<C, Duration> heldOff) {
        Ran(List<R> results, List<C> unstarted, boolean stoppedByFailure) {
            this(results, unstarted, stoppedByFailure, Map.of());
        }
    }

    /** What a lane needs to know of a result: whether the endpoint answered, for the stop rule. */
    interface Call<C, R> {
        R call(C call, Duration timeLeft);

        boolean endpointDown(R result);

        /** The result of a call still running at the deadline (cancelled). */
        R late(C call);

        /** Lane {@code lane} (0-based) takes no further call while other lanes still run. */
        default void laneFreed(int lane) {}

        /** How long this call must wait before it may be made (its scope was asked to wait), or null: it may go now. */
        default Duration holdOff(C call) {
            return null;
        }
    }

    /** Shortest time left in which a call still starts, whatever its expected duration. */
    private static final long SHORTEST_START_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long after the deadline a call may take to come back with its own timeout. */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    // A call's state. Each move is a compare-and-set, so a lane and the deadline never both decide a
    // call: a lane takes it (QUEUED -> STARTED) or the deadline withdraws it (-> WITHDRAWN); its
    // result counts (STARTED -> DONE) or the deadline came first (-> LATE).
    private static final int QUEUED = 0;
    private static final int STARTED = 1;
    private static final int DONE = 2;
    private static final int WITHDRAWN = 3;
    private static final int LATE = 4;
    private static final int HELD = 5;

    private final ExecutorService executor;
    private final LongSupplier nanoTime;

    Lanes(ExecutorService executor, LongSupplier nanoTime) {
        this.executor = executor;
        this.nanoTime = nanoTime;
    }

    /**
     * @param expected      how long one call is expected to take
     * @param deadlineNanos when every call must have ended ({@code nanoTime} scale)
     */
    Ran<C, R> run(List<C> calls, int lanes, Duration expected, long deadlineNanos, Call<C, R> caller) {
        if (calls.isEmpty()) {
            return new Ran<>(List.of(), List.of(), false);
        }
        int n = calls.size();
        AtomicIntegerArray states = new AtomicIntegerArray(n);
        AtomicReferenceArray<R> results = new AtomicReferenceArray<>(n);
        AtomicReferenceArray<Duration> holds = new AtomicReferenceArray<>(n);
        AtomicInteger next = new AtomicInteger();
        AtomicBoolean down = new AtomicBoolean();
        long needNanos = Math.max(SHORTEST_START_NANOS, 2 * expected.toNanos());
        int laneCount = Math.max(1, Math.min(lanes, n));
        AtomicInteger running = new AtomicInteger(laneCount);
        List<Future<?>> futures = new ArrayList<>(laneCount);
        for (int lane = 0; lane < laneCount; lane++) {
            int laneIndex = lane;
            futures.add(executor.submit(() -> {
                while (!down.get() && !Thread.currentThread().isInterrupted() && deadlineNanos - nanoTime.getAsLong() >= needNanos) {
                    int i = next.getAndIncrement();
                    if (i >= n) {
                        break;
                    }
                    Duration hold = caller.holdOff(calls.get(i));
                    if (hold != null) {
                        holds.set(i, hold);
                        if (states.compareAndSet(i, QUEUED, HELD)) {
                            continue;
                        }
                        break;
                    }
                    if (!states.compareAndSet(i, QUEUED, STARTED)) {
                        break;
                    }
                    R result = caller.call(calls.get(i), Duration.ofNanos(deadlineNanos - nanoTime.getAsLong()));
                    results.set(i, result);
                    if (!states.compareAndSet(i, STARTED, DONE)) {
                        break; // declared late meanwhile: the lanes are over
                    }
                    if (caller.endpointDown(result)) {
                        down.set(true);
                    }
                }
                if (running.decrementAndGet() > 0 && !Thread.currentThread().isInterrupted()) {
                    caller.laneFreed(laneIndex);
                }
                return null;
            }));
        }
        awaitLanes(futures, deadlineNanos);
        List<R> made = new ArrayList<>(n);
        List<C> unstarted = new ArrayList<>();
        Map<C, Duration> heldOff = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            if (states.get(i) == HELD) {
                heldOff.put(calls.get(i), holds.get(i));
            } else if (states.compareAndSet(i, QUEUED, WITHDRAWN)) {
                unstarted.add(calls.get(i));
            } else if (states.compareAndSet(i, STARTED, LATE)) {
                made.add(caller.late(calls.get(i))); // not back by the deadline, or crashed in Runner
            } else {
                made.add(results.get(i));
            }
        }
        futures.forEach(future -> future.cancel(true));
        return new Ran<>(made, unstarted, down.get(), heldOff);
    }

    /** Until every lane ended, or the deadline and a grace for calls' own timeouts. */
    private void awaitLanes(List<Future<?>> futures, long deadlineNanos) {
        for (Future<?> future : futures) {
            long waitNanos = Math.max(0, deadlineNanos - nanoTime.getAsLong()) + GRACE_NANOS;
            try {
                future.get(waitNanos, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                break;
            } catch (ExecutionException e) {
                // The caller turns its own failures into results; a lane crashing is a bug: its call counts as late.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }
}
