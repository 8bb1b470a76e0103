package dev.runner.functions.telemetry;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.functions.telemetry.MetricRecord.Metric;
import dev.runner.json.Json;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CloudWatch Embedded Metric Format: a JSON log line that CloudWatch Logs turns into metrics, with
 * no API call and no agent ({@code _aws.CloudWatchMetrics} says which root fields are metrics and
 * which are their dimensions; every other root field is a property). Written here rather than with
 * Powertools' metrics module: that one brings the aws-embedded-metrics library, which probes the
 * EC2 and ECS metadata endpoints on every cold start unless AWS_EMF_ENVIRONMENT is set, keeps one
 * instance per JVM (the local runtime runs every function in one), and adds some 430 classes and a
 * few hundred milliseconds to the first flush; the format is this class.
 */
final class EmfFormat {

    /** EMF takes at most 100 values per metric in one record; more go into further lines. */
    static final int MAX_VALUES = 100;

    private EmfFormat() {}

    /** The record as EMF lines: one, or more when a metric has over {@link #MAX_VALUES} values. */
    static List<String> lines(MetricRecord record, String namespace, long timestampMs) {
        List<String> lines = new ArrayList<>();
        for (int from = 0; ; from += MAX_VALUES) {
            int start = from;
            List<Metric> slice = record.metrics().stream()
                    .filter(metric -> metric.values().size() > start)
                    .map(metric -> new Metric(metric.name(), metric.unit(), metric.dimensionSets(),
                            metric.values().subList(start, Math.min(metric.values().size(), start + MAX_VALUES))))
                    .toList();
            if (slice.isEmpty()) {
                return lines;
            }
            lines.add(Json.write(line(record, slice, namespace, timestampMs)));
        }
    }

    private static ObjectNode line(MetricRecord record, List<Metric> metrics, String namespace, long timestampMs) {
        ObjectNode root = Json.object();
        ObjectNode aws = root.putObject("_aws");
        aws.put("Timestamp", timestampMs);
        ArrayNode directives = aws.putArray("CloudWatchMetrics");
        Map<List<List<String>>, List<Metric>> byDimensionSets = new LinkedHashMap<>();
        metrics.forEach(metric -> byDimensionSets.computeIfAbsent(metric.dimensionSets(), d -> new ArrayList<>()).add(metric));
        byDimensionSets.forEach((dimensionSets, group) -> {
            ObjectNode directive = directives.addObject();
            directive.put("Namespace", namespace);
            ArrayNode sets = directive.putArray("Dimensions");
            dimensionSets.forEach(set -> set.forEach(sets.addArray()::add));
            ArrayNode definitions = directive.putArray("Metrics");
            group.forEach(metric -> definitions.addObject().put("Name", metric.name()).put("Unit", metric.unit()));
        });
        record.dimensions().forEach(root::put);
        for (Metric metric : metrics) {
            if (metric.values().size() == 1) {
                root.set(metric.name(), number(metric.values().getFirst()));
            } else {
                ArrayNode values = root.putArray(metric.name());
                metric.values().forEach(value -> values.add(number(value)));
            }
        }
        record.properties().forEach((name, value) -> property(root, name, value));
        return root;
    }

    /** Whole numbers (counts) without a trailing .0. */
    private static com.fasterxml.jackson.databind.JsonNode number(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15
                ? com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.numberNode((long) value)
                : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.numberNode(value);
    }

    private static void property(ObjectNode root, String name, Object value) {
        if (value instanceof Collection<?> values) {
            ArrayNode array = root.putArray(name);
            values.forEach(element -> array.add(String.valueOf(element)));
        } else {
            root.put(name, String.valueOf(value));
        }
    }
}
