package dev.runner.pipeline;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Turns at a connection pool for work that runs more jobs at once than the pool has connections:
 * a job takes a turn for a stretch of store work (a few short statements, each borrowing one
 * connection and giving it back), never across a call that may take long. So no more jobs borrow
 * at once than there are connections, and a job waits for its turn here, as long as its
 * invocation allows, instead of timing out on the pool however busy the other jobs are.
 */
final class StoreTurns {

    /** No turn came while the invocation could wait for one: the job is retried, as after any store failure. */
    static final class NoTurn extends RuntimeException {
        NoTurn(String message) {
            super(message);
        }
    }

    private final Semaphore turns;
    private final LongSupplier waitMillis;

    /** @param connections the pool's size */
    StoreTurns(int connections) {
        this(new Semaphore(connections, true), () -> Long.MAX_VALUE);
    }

    private StoreTurns(Semaphore turns, LongSupplier waitMillis) {
        this.turns = turns;
        this.waitMillis = waitMillis;
    }

    /** The same turns, for work that waits for one at most {@code waitMillis} (read at each wait). */
    StoreTurns waitingAtMost(LongSupplier waitMillis) {
        return new StoreTurns(turns, waitMillis);
    }

    <T> T take(Supplier<T> work) {
        try {
            if (!turns.tryAcquire(Math.max(0, waitMillis.getAsLong()), TimeUnit.MILLISECONDS)) {
                throw new NoTurn("no turn at the connection pool while the invocation had time to wait for one");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NoTurn("interrupted while waiting for a turn at the connection pool");
        }
        try {
            return work.get();
        } finally {
            turns.release();
        }
    }

    void take(Runnable work) {
        take(() -> {
            work.run();
            return null;
        });
    }
}
