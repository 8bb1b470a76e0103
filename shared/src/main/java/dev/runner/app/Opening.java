package dev.runner.app;

import java.time.Duration;
import java.util.List;

/** What {@link Runner#openInBackground} started: one thread per connection being opened. */
public record Opening(List<Thread> threads) {

    /** Waits until every opener is done (a SnapStart checkpoint waits for them); false if time ran out. */
    public boolean await(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread thread : threads) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !thread.join(Duration.ofNanos(left))) {
                return false;
            }
        }
        return true;
    }
}
