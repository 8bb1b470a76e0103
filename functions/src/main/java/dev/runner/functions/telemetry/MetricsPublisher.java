package dev.runner.functions.telemetry;

import java.util.List;

/** Where an invocation's metric records go: EMF lines on stdout in Lambda; the local runtime prints them its own way. */
@FunctionalInterface
public interface MetricsPublisher {

    void publish(List<MetricRecord> records);

    /** CloudWatch EMF on stdout, which Lambda sends to CloudWatch Logs. */
    MetricsPublisher EMF_ON_STDOUT = records -> {
        long now = System.currentTimeMillis();
        for (MetricRecord record : records) {
            EmfFormat.lines(record, MetricsRecording.NAMESPACE, now).forEach(System.out::println);
        }
    };

    /** EMF lines into {@code sink}: for tests that read what a function published. */
    static MetricsPublisher emf(java.util.function.Consumer<String> sink) {
        return records -> {
            long now = System.currentTimeMillis();
            records.forEach(record -> EmfFormat.lines(record, MetricsRecording.NAMESPACE, now).forEach(sink));
        };
    }
}
