package dev.runner.pipeline;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a group's calls share their lanes: never more in flight than the lanes, stop on a down endpoint or a near deadline. */
class LanesTest {

    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Lanes<Integer, String> lanes = new Lanes<>(executor, System::nanoTime);

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void neverMoreCallsInFlightThanLanesAndEveryCallIsMade() {
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        var caller = new Caller(call -> {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            sleep(5);
            inFlight.decrementAndGet();
            return "ok-" + call;
        });

        Lanes.Ran<Integer, String> ran = lanes.run(calls(10), 4, Duration.ofMillis(5), deadlineIn(Duration.ofSeconds(10)), caller);

        assertEquals(10, ran.results().size());
        assertTrue(ran.unstarted().isEmpty());
        assertEquals(4, most.get(), "four lanes, kept full");
    }

    @Test
    void afterACallFindsTheEndpointDownNoOtherStarts() {
        var caller = new Caller(call -> "down");

        Lanes.Ran<Integer, String> ran = lanes.run(calls(6), 1, Duration.ofMillis(1), deadlineIn(Duration.ofSeconds(10)), caller);

        assertEquals(1, ran.results().size(), "one look at a failing endpoint is enough for this batch");
        assertEquals(5, ran.unstarted().size());
        assertTrue(ran.stoppedByFailure());
    }

    @Test
    void aCallThatCannotEndBeforeTheDeadlineIsNotStarted() {
        var caller = new Caller(call -> {
            sleep(60);
            return "ok";
        });

        Lanes.Ran<Integer, String> ran = lanes.run(calls(5), 1, Duration.ofMillis(60), deadlineIn(Duration.ofMillis(300)), caller);

        assertTrue(ran.results().stream().allMatch("ok"::equals), "every call started ended in time: " + ran.results());
        assertTrue(ran.unstarted().size() >= 1, "not every call fits in 300 ms of 60 ms calls one after another");
        assertEquals(5, ran.results().size() + ran.unstarted().size(), "the rest handed back, not failed");
        assertTrue(!ran.stoppedByFailure());
    }

    @Test
    void aCallStillRunningAtTheDeadlineEndsLate() {
        CountDownLatch never = new CountDownLatch(1);
        var caller = new Caller(call -> {
            try {
                never.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "answered";
        });

        Lanes.Ran<Integer, String> ran = lanes.run(calls(1), 1, Duration.ZERO, deadlineIn(Duration.ofSeconds(1)), caller);

        assertEquals(List.of("late-0"), ran.results());
    }

    @Test
    void aLaneWithNoCallLeftIsFreedWhileTheOthersStillRun() {
        CountDownLatch lastCallMayEnd = new CountDownLatch(1);
        List<Integer> freed = new java.util.concurrent.CopyOnWriteArrayList<>();
        var caller = new Caller(call -> {
            if (call == 0) {
                await(lastCallMayEnd);
            }
            return "ok-" + call;
        }) {
            @Override
            public void laneFreed(int lane) {
                freed.add(lane);
                lastCallMayEnd.countDown();
            }
        };

        Lanes.Ran<Integer, String> ran = lanes.run(calls(5), 2, Duration.ofMillis(1), deadlineIn(Duration.ofSeconds(10)), caller);

        assertEquals(5, ran.results().size());
        assertEquals(1, freed.size(), "the lane that ran calls 1-4 was freed while the other still held call 0; the last lane is not: " + freed);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS), "the other lane was never freed");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static List<Integer> calls(int n) {
        return IntStream.range(0, n).boxed().toList();
    }

    private static long deadlineIn(Duration duration) {
        return System.nanoTime() + duration.toNanos();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static class Caller implements Lanes.Call<Integer, String> {
        private final java.util.function.Function<Integer, String> body;

        Caller(java.util.function.Function<Integer, String> body) {
            this.body = body;
        }

        @Override
        public String call(Integer call, Duration timeLeft) {
            return body.apply(call);
        }

        @Override
        public boolean endpointDown(String result) {
            return result.equals("down");
        }

        @Override
        public String late(Integer call) {
            return "late-" + call;
        }
    }
}
