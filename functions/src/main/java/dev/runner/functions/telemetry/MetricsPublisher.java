package dev.runner.functions.telemetry;

import java.util.List;

/** Where an invocation's metric records go: EMF lines on stdout in Lambda; the local runtime prints them its own way. */
@FunctionalInterface
public interface MetricsPublisher {

    void publish(List<MetricRecord> records);

    /** Does at init what the first publish would do on a request's path (load and link the writer), writing nothing. */
    default void prime() {
    }
}
