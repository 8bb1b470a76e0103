package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.Locale;

/**
 * Where a run stands, as {@code runs watch} draws it: succeeded, dead and open of the total, the rate
 * at which items end since the watch began, and the time left at that rate. Pure: the watcher feeds
 * it runs and times. A superseded item (ended by coalescing: another item's call carried its update) counts
 * with the succeeded.
 */
record Progress(String status, long total, long succeeded, long dead, long cancelled, double perSecond) {

    /** A run as GET /runs/{runId} answers it; {@code endedAtStart} and {@code elapsed}: what ended before the watch, and since. */
    static Progress of(JsonNode run, long endedAtStart, Duration elapsed) {
        JsonNode counts = run.path("counts");
        long succeeded = counts.path("succeeded").asLong() + counts.path("superseded").asLong();
        long dead = counts.path("dead").asLong();
        double seconds = elapsed.toMillis() / 1000.0;
        double rate = seconds <= 0 ? 0 : Math.max(0, succeeded + dead - endedAtStart) / seconds;
        return new Progress(Output.safe(run.path("status").asText()), counts.path("total").asLong(), succeeded, dead,
                counts.path("cancelled").asLong(), rate);
    }

    static long ended(JsonNode run) {
        return run.path("counts").path("succeeded").asLong() + run.path("counts").path("superseded").asLong()
                + run.path("counts").path("dead").asLong();
    }

    long open() {
        return Math.max(0, total - succeeded - dead - cancelled);
    }

    boolean finished() {
        return switch (status) {
            case "completed", "completed_with_errors", "failed", "cancelled" -> true;
            default -> false;
        };
    }

    /** Seconds left at the current rate; null when there is no rate yet or nothing is left. */
    Long secondsLeft() {
        return perSecond <= 0 || open() == 0 ? null : (long) Math.ceil(open() / perSecond);
    }

    /** One line for a terminal, {@code width} characters of bar: {@code =} succeeded, {@code x} dead, {@code -} cancelled, {@code .} open. */
    String bar(int width) {
        StringBuilder bar = new StringBuilder(width + 2).append('[');
        int ok = cells(succeeded, width);
        int bad = cells(dead, width);
        int gone = cells(cancelled, width);
        for (int i = 0; i < width; i++) {
            bar.append(i < ok ? '=' : i < ok + bad ? 'x' : i < ok + bad + gone ? '-' : '.');
        }
        return String.format(Locale.ROOT, "%-12s %s] %s", status, bar, figures());
    }

    /** One line for a log or a pipe. */
    String line() {
        return String.format(Locale.ROOT, "%s %s", status, figures());
    }

    private String figures() {
        StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "%,d succeeded, %,d dead, %,d open of %,d", succeeded, dead, open(), total));
        if (cancelled > 0) {
            text.append(String.format(Locale.ROOT, ", %,d cancelled", cancelled));
        }
        text.append(String.format(Locale.ROOT, " | %.1f/s", perSecond));
        Long left = secondsLeft();
        if (left != null && !finished()) {
            text.append(String.format(Locale.ROOT, " | %d:%02d left", left / 60, left % 60));
        }
        return text.toString();
    }

    private int cells(long count, int width) {
        return total == 0 ? 0 : (int) Math.round((double) count * width / total);
    }
}
