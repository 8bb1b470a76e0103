package dev.runner.functions.telemetry;

import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The invocation context as threads see it: shared with the threads an invocation starts, never stale, never crossed. */
class InvocationLocalTest {

    @Test
    void aPooledThreadBornInOneInvocationSeesTheNextOne() throws Exception {
        var local = new InvocationLocal<String>();
        Thread.ofPlatform().start(() -> {
            local.set("request-1");
            ExecutorService pool = Executors.newSingleThreadExecutor(); // its thread starts now, in request 1
            try {
                assertEquals("request-1", pool.submit(local::get).get());
                local.set(null);
                assertNull(pool.submit(local::get).get(), "between invocations: nothing");
                local.set("request-2");
                assertEquals("request-2", pool.submit(local::get).get(), "not the request it was born in");
            } catch (Exception e) {
                throw new AssertionError(e);
            } finally {
                pool.shutdown();
            }
        }).join();
    }

    @Test
    void twoThreadsRunningInvocationsNeverSeeEachOthers() throws Exception {
        var local = new InvocationLocal<String>();
        local.set("runtime"); // the thread that starts both pollers
        var seenByFirst = new AtomicReference<String>();
        var second = Thread.ofPlatform().unstarted(() -> local.set("poller-2"));
        var first = Thread.ofPlatform().unstarted(() -> {
            local.set("poller-1");
            second.start();
            try {
                second.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            seenByFirst.set(local.get());
        });
        first.start();
        first.join();

        assertEquals("poller-1", seenByFirst.get());
        assertEquals("runtime", local.get(), "a thread that sets a value takes a slot of its own");
    }
}
