package dev.runner.functions.telemetry;

import dev.runner.functions.telemetry.MetricRecord.Metric;
import software.amazon.cloudwatchlogs.emf.config.Configuration;
import software.amazon.cloudwatchlogs.emf.config.EnvironmentConfigurationProvider;
import software.amazon.cloudwatchlogs.emf.environment.Environments;
import software.amazon.lambda.powertools.metrics.Metrics;
import software.amazon.lambda.powertools.metrics.model.DimensionSet;
import software.amazon.lambda.powertools.metrics.model.MetricUnit;
import software.amazon.lambda.powertools.metrics.provider.EmfMetricsProvider;
import software.amazon.lambda.powertools.metrics.provider.MetricsProvider;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An invocation's records written as CloudWatch EMF by Powertools for AWS Lambda's metrics module
 * (powertools-metrics 2.x, called directly: no AspectJ aspect). One Powertools {@link Metrics} per
 * record and dimension sets, flushed at once: an instance puts all its metrics under the same
 * dimension sets, where a record of docs/metrics.md can hold metrics with different ones
 * ({@code BreakerOpen} is summed per function too, {@code HandlerLatency} is not).
 *
 * <p>Instances come from the provider, not from {@code MetricsFactory}: the factory's instance is
 * one per JVM, scoped by X-Ray trace id (the local runtime runs every function in one JVM, mostly
 * with none), and adds a {@code Service} dimension the alarms do not ask for. The first dimension
 * set is the instance's default dimensions, which also turns off the EMF library's own
 * ({@code LogGroup}, {@code ServiceName}, {@code ServiceType}).
 */
final class PowertoolsMetricsPublisher implements MetricsPublisher {

    static {
        // What AWS_EMF_ENVIRONMENT=Lambda (template.yaml) says, wherever the functions run without it
        // (tests, a JVM on a laptop): EMF on stdout. Left to discover its environment, the EMF library
        // probes the EC2 and ECS metadata endpoints and, outside Lambda, falls back to a CloudWatch agent
        // on localhost:25888.
        Configuration emf = EnvironmentConfigurationProvider.getConfig();
        if (emf.getEnvironmentOverride() == Environments.Unknown) {
            emf.setEnvironmentOverride(Environments.Lambda);
        }
    }

    private final MetricsProvider provider;

    PowertoolsMetricsPublisher() {
        this(new EmfMetricsProvider());
    }

    /** Writes through the provider's instances: tests give one that writes where they read. */
    PowertoolsMetricsPublisher(MetricsProvider provider) {
        this.provider = Objects.requireNonNull(provider, "provider");
    }

    @Override
    public void publish(List<MetricRecord> records) {
        for (MetricRecord record : records) {
            Map<List<List<String>>, List<Metric>> byDimensionSets = new LinkedHashMap<>();
            record.metrics().forEach(metric -> byDimensionSets.computeIfAbsent(metric.dimensionSets(), d -> new ArrayList<>()).add(metric));
            byDimensionSets.forEach((dimensionSets, metrics) -> flush(record, dimensionSets, metrics));
        }
    }

    private void flush(MetricRecord record, List<List<String>> dimensionSets, List<Metric> metrics) {
        Metrics emf = provider.getMetricsInstance();
        emf.setNamespace(MetricsRecording.NAMESPACE);
        emf.setDefaultDimensions(dimensionSet(record, dimensionSets.getFirst()));
        dimensionSets.stream().skip(1).forEach(set -> emf.addDimension(dimensionSet(record, set)));
        for (Metric metric : metrics) {
            MetricUnit unit = unit(metric.unit());
            // One value per call: the EMF library lists a metric's values and splits past 100.
            metric.values().forEach(value -> emf.addMetric(metric.name(), value, unit));
        }
        record.properties().forEach(emf::addMetadata);
        emf.flush();
    }

    private static DimensionSet dimensionSet(MetricRecord record, List<String> names) {
        DimensionSet set = new DimensionSet();
        names.forEach(name -> set.addDimension(name, record.dimensions().get(name)));
        return set;
    }

    private static MetricUnit unit(String unit) {
        return switch (unit) {
            case MetricsRecording.COUNT -> MetricUnit.COUNT;
            case MetricsRecording.MILLISECONDS -> MetricUnit.MILLISECONDS;
            default -> throw new IllegalArgumentException("no Powertools unit for " + unit);
        };
    }
}
