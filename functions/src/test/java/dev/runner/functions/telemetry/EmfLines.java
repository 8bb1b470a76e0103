package dev.runner.functions.telemetry;

import java.util.function.Consumer;

/**
 * The functions' EMF lines, as Powertools writes them in Lambda, into a sink instead of stdout: for
 * tests that read what was published. Powertools' own instances (its EmfMetricsLogger) in Lambda's
 * EMF environment, with only the sink replaced.
 */
public final class EmfLines {

    private EmfLines() {}

    /** A publisher whose EMF lines go to {@code sink}. */
    public static MetricsPublisher into(Consumer<String> sink) {
        return PowertoolsMetricsPublisher.into(sink);
    }
}
