package dev.runner.app;

import dev.runner.log.Log;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Opens a root's connections at init, each on a thread of its own, so the first invocation finds
 * them open (or opening) instead of paying for them in turn. A failure is logged and left to the
 * first request, which tries again as it would have anyway.
 */
final class Openers {

    private static final Log LOG = Log.of(Openers.class);

    private Openers() {}

    /** Starts one daemon thread per entry (by the part's name); returns at once. */
    static Opening start(Map<String, Runnable> openers) {
        List<Thread> threads = new ArrayList<>();
        openers.forEach((name, open) -> threads.add(Thread.ofPlatform().daemon().name("runner-open-" + name).unstarted(() -> {
            try {
                open.run();
            } catch (RuntimeException e) {
                LOG.warn("not opened at init, the first request tries again", "part", name, "error", e.getMessage());
            }
        })));
        threads.forEach(Thread::start);
        return new Opening(List.copyOf(threads));
    }
}
