package dev.runner.app;

import dev.runner.log.Log;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opens a root's connections at init, each on a thread of its own, so the first invocation finds
 * them open (or opening) instead of paying for them in turn. A failure is logged and left to the
 * first request, which tries again as it would have anyway. When the last is done, one line says
 * how long each took in milliseconds ({@code connections opened}, a field per part, {@code -1} for
 * one that failed): after a SnapStart restore, that is what the first request waited for.
 */
final class Openers {

    private static final Log LOG = Log.of(Openers.class);

    private Openers() {}

    /** Starts one daemon thread per entry (by the part's name); returns at once. */
    static Opening start(Map<String, Runnable> openers) {
        Map<String, Long> tookMillis = new LinkedHashMap<>();
        openers.keySet().forEach(name -> tookMillis.put(name, -1L));
        AtomicInteger left = new AtomicInteger(openers.size());
        List<Thread> threads = new ArrayList<>();
        openers.forEach((name, open) -> threads.add(Thread.ofPlatform().daemon().name("runner-open-" + name).unstarted(() -> {
            long start = System.nanoTime();
            try {
                open.run();
                synchronized (tookMillis) {
                    tookMillis.put(name, (System.nanoTime() - start) / 1_000_000);
                }
            } catch (RuntimeException e) {
                LOG.warn("not opened at init, the first request tries again", "part", name, "error", e.getMessage());
            } finally {
                if (left.decrementAndGet() == 0) {
                    logOpened(tookMillis);
                }
            }
        })));
        threads.forEach(Thread::start);
        return new Opening(List.copyOf(threads));
    }

    private static void logOpened(Map<String, Long> tookMillis) {
        List<Object> fields = new ArrayList<>();
        synchronized (tookMillis) {
            tookMillis.forEach((name, millis) -> {
                fields.add(name);
                fields.add(millis);
            });
        }
        LOG.info("connections opened", fields.toArray());
    }
}
