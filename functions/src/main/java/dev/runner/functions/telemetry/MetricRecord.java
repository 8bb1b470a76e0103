package dev.runner.functions.telemetry;

import java.util.List;
import java.util.Map;

/**
 * Metrics published together (one EMF record): the dimension values they share, the metrics, and
 * properties, which are searchable in the log line but never dimensions (tenants, runs, handlers:
 * each distinct dimension value would be a metric of its own, billed).
 */
public record MetricRecord(Map<String, String> dimensions, List<Metric> metrics, Map<String, Object> properties) {

    /**
     * One metric of the record.
     *
     * @param dimensionSets the dimension sets it is published under (names among the record's dimensions)
     * @param values        one or more values: counts are one sum, latencies one value per call
     */
    public record Metric(String name, String unit, List<List<String>> dimensionSets, List<Double> values) {
        public Metric {
            dimensionSets = List.copyOf(dimensionSets);
            values = List.copyOf(values);
        }
    }

    public MetricRecord {
        dimensions = Map.copyOf(dimensions);
        metrics = List.copyOf(metrics);
        properties = Map.copyOf(properties);
    }
}
