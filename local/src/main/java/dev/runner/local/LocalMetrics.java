package dev.runner.local;

import dev.runner.functions.telemetry.InvocationMetrics;
import dev.runner.functions.telemetry.MetricRecord;
import dev.runner.functions.telemetry.MetricsPublisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The metrics an invocation published, as the functions publish them in Lambda: CloudWatch EMF
 * written by Powertools on stdout ({@link InvocationMetrics#EMF_ON_STDOUT}), which the runtime
 * sends to its metrics file ({@link EmfCapture}); and, for people, a short plain line among the
 * runtime's own logs: the dimensions, each metric with its values and unit, then the properties.
 * The EMF is written on the invocation's thread, as in Lambda; the plain line, which Lambda does not
 * write, on a thread of the runtime's, in the order the invocations published.
 */
final class LocalMetrics implements MetricsPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(LocalMetrics.class);

    private static final ExecutorService LINES = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name("local-metrics").factory());

    @Override
    public void publish(List<MetricRecord> records) {
        InvocationMetrics.EMF_ON_STDOUT.publish(records);
        if (LOG.isInfoEnabled()) {
            LINES.execute(() -> records.forEach(record -> LOG.info("metrics {}", line(record))));
        }
    }

    @Override
    public void prime() {
        InvocationMetrics.EMF_ON_STDOUT.prime();
    }

    /** E.g. {@code Function=runner-ItemWorkerFunction: ItemsSucceeded=3 Count, RunDuration=[812, 1040] Milliseconds (tenantIds=[t-demo])}. */
    static String line(MetricRecord record) {
        var dimensions = new StringJoiner(" ");
        new TreeMap<>(record.dimensions()).forEach((name, value) -> dimensions.add(name + "=" + value));
        var metrics = new StringJoiner(", ");
        for (MetricRecord.Metric metric : record.metrics()) {
            List<String> values = metric.values().stream().map(LocalMetrics::number).toList();
            metrics.add(metric.name() + "=" + (values.size() == 1 ? values.getFirst() : values.toString()) + " " + metric.unit());
        }
        var properties = new StringJoiner(", ", " (", ")").setEmptyValue("");
        new TreeMap<>(record.properties()).forEach((name, value) -> properties.add(name + "=" + value));
        return dimensions + ": " + metrics + properties;
    }

    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format("%.1f", value);
    }
}
