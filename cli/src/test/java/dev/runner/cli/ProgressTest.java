package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** How runs watch draws a run: the bar, the line, the rate and the time left. No I/O. */
class ProgressTest {

    @Test
    void drawsSucceededDeadAndOpenOfTheTotalWithRateAndTimeLeft() {
        Progress progress = Progress.of(run("running", 1000, 400, 100, 0), 300, Duration.ofSeconds(10));
        assertEquals("running      [============xxx...............] 400 succeeded, 100 dead, 500 open of 1,000 | 20.0/s | 0:25 left",
                progress.bar(30));
        assertEquals("running 400 succeeded, 100 dead, 500 open of 1,000 | 20.0/s | 0:25 left", progress.line());
    }

    @Test
    void cancelledItemsAreNeitherOpenNorDone() {
        Progress progress = Progress.of(run("cancelled", 10, 4, 0, 6), 0, Duration.ofSeconds(2));
        assertEquals(0, progress.open());
        assertEquals("cancelled    [====------] 4 succeeded, 0 dead, 0 open of 10, 6 cancelled | 2.0/s", progress.bar(10));
    }

    @Test
    void noRateYetMeansNoTimeLeft() {
        Progress progress = Progress.of(run("fetching", 0, 0, 0, 0), 0, Duration.ZERO);
        assertNull(progress.secondsLeft());
        assertEquals("fetching 0 succeeded, 0 dead, 0 open of 0 | 0.0/s", progress.line());
    }

    @Test
    void exitCodesSayHowTheRunEnded() {
        assertEquals(0, RunWatcher.exit("completed"));
        assertEquals(3, RunWatcher.exit("completed_with_errors"));
        assertEquals(4, RunWatcher.exit("cancelled"));
        assertEquals(5, RunWatcher.exit("failed"));
    }

    private static JsonNode run(String status, long total, long succeeded, long dead, long cancelled) {
        ObjectNode run = ApiClient.JSON.createObjectNode().put("status", status);
        run.putObject("counts").put("total", total).put("succeeded", succeeded).put("dead", dead).put("cancelled", cancelled);
        return run;
    }
}
