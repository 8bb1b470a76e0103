package dev.runner.functions.telemetry;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.runner.functions.telemetry.MetricRecord.Metric;
import software.amazon.cloudwatchlogs.emf.config.Configuration;
import software.amazon.cloudwatchlogs.emf.config.EnvironmentConfigurationProvider;
import software.amazon.cloudwatchlogs.emf.environment.Environment;
import software.amazon.cloudwatchlogs.emf.environment.EnvironmentProvider;
import software.amazon.cloudwatchlogs.emf.environment.Environments;
import software.amazon.cloudwatchlogs.emf.environment.LambdaEnvironment;
import software.amazon.cloudwatchlogs.emf.model.MetricsContext;
import software.amazon.cloudwatchlogs.emf.sinks.ISink;
import software.amazon.lambda.powertools.metrics.Metrics;
import software.amazon.lambda.powertools.metrics.internal.EmfMetricsLogger;
import software.amazon.lambda.powertools.metrics.model.DimensionSet;
import software.amazon.lambda.powertools.metrics.model.MetricUnit;
import software.amazon.lambda.powertools.metrics.provider.EmfMetricsProvider;
import software.amazon.lambda.powertools.metrics.provider.MetricsProvider;

import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

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

    /**
     * Powertools' own instances in Lambda's EMF environment, their lines going to {@code sink} instead
     * of stdout: for tests that read what was published, and for {@link #prime}, which drops them.
     */
    static PowertoolsMetricsPublisher into(Consumer<String> sink) {
        ISink lines = new ISink() {
            @Override
            public void accept(MetricsContext context) {
                try {
                    context.serialize().forEach(sink);
                } catch (JsonProcessingException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public CompletableFuture<Void> shutdown() {
                return CompletableFuture.completedFuture(null);
            }
        };
        Environment lambda = new LambdaEnvironment() {
            @Override
            public ISink getSink() {
                return lines;
            }
        };
        EnvironmentProvider environments = new EnvironmentProvider() {
            @Override
            public CompletableFuture<Environment> resolveEnvironment() {
                return CompletableFuture.completedFuture(lambda);
            }
        };
        return new PowertoolsMetricsPublisher(() -> new EmfMetricsLogger(environments, new MetricsContext()));
    }

    /**
     * Publishes a cold start's record into nowhere: the first flush's work (the EMF library's one
     * {@code ObjectMapper} and the serializers it finds by introspection, hundreds of classes loaded)
     * done at init, on a thread of its own, instead of in the first invocation, and held in a
     * SnapStart snapshot.
     */
    @Override
    public void prime() {
        into(line -> { }).publish(new MetricsRecording().records("prime", "prime", true));
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
