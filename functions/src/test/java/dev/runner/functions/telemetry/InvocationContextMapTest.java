package dev.runner.functions.telemetry;

import org.apache.logging.log4j.CloseableThreadContext;
import org.apache.logging.log4j.ThreadContext;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The logging context (SLF4J's MDC, Log4j's thread context) as the threads of an invocation see it. */
class InvocationContextMapTest {

    /** An invocation's work: given a pool whose thread was started during the invocation of request-1. */
    private interface Work {
        void run(ExecutorService pool) throws Exception;
    }

    @Test
    void aPooledThreadBornInOneInvocationLogsTheNextOnesRequestId() throws Throwable {
        assertInstanceOf(InvocationContextMap.class, ThreadContext.getThreadContextMap(), "log4j2.component.properties names it");
        inRequestOne(pool -> {
            assertEquals("request-1", pool.submit(() -> MDC.get("function_request_id")).get());
            MDC.clear();
            assertNull(pool.submit(() -> MDC.get("function_request_id")).get(), "between invocations: nothing");
            MDC.put("function_request_id", "request-2");
            assertEquals("request-2", pool.submit(() -> MDC.get("function_request_id")).get(), "not the request it was born in");
        });
    }

    @Test
    void aLinesFieldsOnAnotherThreadStayOnThatThreadAndLeaveItFollowingTheInvocation() throws Throwable {
        inRequestOne(pool -> {
            // What SLF4J's key-value pairs do for the length of one line, written on the pool's thread.
            Map<String, String> during = pool.submit(() -> {
                try (var line = CloseableThreadContext.put("items", "3")) {
                    return ThreadContext.getContext();
                }
            }).get();
            assertEquals(Map.of("function_request_id", "request-1", "items", "3"), during);
            assertNull(MDC.get("items"), "the invocation's thread never sees another thread's line fields");
            MDC.put("function_request_id", "request-2");
            assertEquals(Map.of("function_request_id", "request-2"), pool.submit(ThreadContext::getContext).get(),
                    "after its line the pool's thread follows the invocation again");
        });
    }

    /** Runs {@code work} on a thread of its own that starts an invocation, request-1, and a pool within it. */
    private static void inRequestOne(Work work) throws Throwable {
        var failure = new AtomicReference<Throwable>();
        Thread.ofPlatform().start(() -> {
            InvocationContextMap.startHere();
            MDC.put("function_request_id", "request-1");
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                pool.submit(() -> {}).get(); // its thread starts now, in request 1
                work.run(pool);
            } catch (Throwable e) {
                failure.set(e);
            } finally {
                pool.shutdown();
                MDC.clear();
            }
        }).join();
        if (failure.get() != null) {
            throw failure.get();
        }
    }
}
