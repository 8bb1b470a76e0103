package dev.runner.pipeline;

import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * Turns at a connection pool for work that runs more jobs at once than the pool has connections:
 * a job takes a turn for a stretch of store work (a few short statements, each borrowing one
 * connection and giving it back), never across a call that may take long. So no more jobs borrow
 * at once than there are connections, and a job waits for its turn here, however busy the
 * others, instead of timing out on the pool.
 */
final class StoreTurns {

    /** The job was interrupted while it waited for its turn (its invocation is ending). */
    static final class Interrupted extends RuntimeException {
        Interrupted() {
            super("interrupted while waiting for a turn at the connection pool");
        }
    }

    private final Semaphore turns;

    /** @param connections the pool's size */
    StoreTurns(int connections) {
        this.turns = new Semaphore(connections, true);
    }

    <T> T take(Supplier<T> work) {
        try {
            turns.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Interrupted();
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
