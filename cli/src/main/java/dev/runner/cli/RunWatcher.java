package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;

/**
 * Follows a run (GET /runs/{runId} every interval) until it ends, and says how it ended in the exit
 * code: 0 completed, 3 dead items, 4 cancelled, 5 failed. On a terminal the bar is redrawn in
 * place; otherwise a line is printed whenever the run moved, so a log or a pipe reads well.
 */
final class RunWatcher {

    /** How progress is drawn: {@code auto} is a bar when the output is a terminal. */
    enum Style { auto, bar, lines }

    private static final int BAR_WIDTH = 30;
    /** Erase the line, back to its start: the bar is redrawn in place. */
    private static final String REDRAW = "\r\u001b[2K";

    private final ApiClient api;
    private final Output out;
    private final boolean bar;
    private final Duration interval;

    RunWatcher(ApiClient api, Output out, Style style, Duration interval) {
        this.api = api;
        this.out = out;
        this.bar = switch (style) {
            case bar -> true;
            case lines -> false;
            case auto -> System.console() != null && !out.json();
        };
        this.interval = interval;
    }

    int watch(String runId) {
        PrintWriter writer = out.writer();
        long startedNanos = System.nanoTime();
        JsonNode run = read(runId);
        long endedAtStart = Progress.ended(run);
        String lastLine = null;
        while (true) {
            Progress progress = Progress.of(run, endedAtStart, Duration.ofNanos(System.nanoTime() - startedNanos));
            if (!out.json()) {
                if (bar) {
                    writer.print(REDRAW + progress.bar(BAR_WIDTH));
                } else if (!progress.line().equals(lastLine)) {
                    writer.println(progress.line());
                }
                lastLine = progress.line();
                writer.flush();
            }
            if (progress.finished()) {
                if (bar && !out.json()) {
                    writer.println();
                }
                out.show(run, () -> out.line("run " + runId + " " + progress.status()));
                return exit(progress.status());
            }
            sleep();
            run = read(runId);
        }
    }

    static int exit(String status) {
        return switch (status) {
            case "completed" -> RunnerCli.Exit.DONE.code;
            case "completed_with_errors" -> RunnerCli.Exit.RUN_HAS_DEAD_ITEMS.code;
            case "cancelled" -> RunnerCli.Exit.RUN_CANCELLED.code;
            default -> RunnerCli.Exit.RUN_FAILED.code;
        };
    }

    private JsonNode read(String runId) {
        return RunnerCli.Call.accepted(api.get("/runs/" + segment(runId), Map.of())).body();
    }

    private void sleep() {
        try {
            Thread.sleep(interval.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiClient.Unreachable("interrupted while watching", e);
        }
    }
}
