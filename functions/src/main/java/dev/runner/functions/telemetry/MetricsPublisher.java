package dev.runner.functions.telemetry;

import java.util.List;

/** Where an invocation's metric records go: EMF lines on stdout in Lambda; the local runtime prints them its own way. */
@FunctionalInterface
public interface MetricsPublisher {

    void publish(List<MetricRecord> records);

    /** CloudWatch EMF on stdout, which Lambda sends to CloudWatch Logs, written by Powertools. */
    MetricsPublisher EMF_ON_STDOUT = new PowertoolsMetricsPublisher();
}
