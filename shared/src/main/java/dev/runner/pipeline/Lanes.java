package dev.runner.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Runs one handler's calls of a batch through {@code lanes} lanes: at most that many in flight,
 * each lane taking the next call when its last one ends, so a handler limited to k calls in
 * flight is kept at k while the batch lasts instead of the rest being sent back to wait. A call
 * starts only while it can still end before the deadline (its expected duration, twice, fits), and
 * none starts after a call found the endpoint down: what does not start is handed back unstarted.
 * A call still running at the deadline ends as {@code late}. Pure scheduling, no I/O of its own.
 *
 * @param <C> a call (the items it carries)
 * @param <R> its result
 */
final class Lanes<C, R> {

    /** How every call of a group ended: results of the calls made, in no particular order, and the calls never started. */
    record Ran<C, R>(List<R> results, List<C> unstarted, boolean stoppedByFailure) {}

    /** What a lane needs to know of a result: whether the endpoint answered, for the stop rule. */
    interface Call<C, R> {
        R call(C call, Duration timeLeft);

        boolean endpointDown(R result);

        /** The result of a call still running at the deadline (cancelled). */
        R late(C call);
    }

    /** Shortest time left in which a call still starts, whatever its expected duration. */
    private static final long SHORTEST_START_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long after the deadline a call may take to come back with its own timeout. */
    private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

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
        Semaphore slots = new Semaphore(Math.max(1, Math.min(lanes, calls.size())), true);
        AtomicBoolean down = new AtomicBoolean();
        long needNanos = Math.max(SHORTEST_START_NANOS, 2 * expected.toNanos());
        List<Pending<C, R>> pending = new ArrayList<>(calls.size());
        for (C call : calls) {
            AtomicBoolean started = new AtomicBoolean();
            Future<R> future = executor.submit(() -> {
                long wait = deadlineNanos - needNanos - nanoTime.getAsLong();
                if (wait <= 0 || !slots.tryAcquire(wait, TimeUnit.NANOSECONDS)) {
                    return null;
                }
                try {
                    long left = deadlineNanos - nanoTime.getAsLong();
                    if (down.get() || left < needNanos) {
                        return null;
                    }
                    started.set(true);
                    R result = caller.call(call, Duration.ofNanos(left));
                    if (caller.endpointDown(result)) {
                        down.set(true);
                    }
                    return result;
                } finally {
                    slots.release();
                }
            });
            pending.add(new Pending<>(call, future, started));
        }
        List<R> results = new ArrayList<>();
        List<C> unstarted = new ArrayList<>();
        for (Pending<C, R> p : pending) {
            R result = await(p, deadlineNanos, caller);
            if (result == null) {
                unstarted.add(p.call());
            } else {
                results.add(result);
            }
        }
        return new Ran<>(results, unstarted, down.get());
    }

    private record Pending<C, R>(C call, Future<R> future, AtomicBoolean started) {}

    private R await(Pending<C, R> p, long deadlineNanos, Call<C, R> caller) {
        long waitNanos = Math.max(0, deadlineNanos - nanoTime.getAsLong()) + GRACE_NANOS;
        try {
            return p.future().get(waitNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            p.future().cancel(true);
            return p.started().get() ? caller.late(p.call()) : null;
        } catch (ExecutionException e) {
            // The caller turns its own failures into results; anything escaping is a bug: the call counts as failed.
            return caller.late(p.call());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.future().cancel(true);
            return p.started().get() ? caller.late(p.call()) : null;
        }
    }
}
