package dev.runner.functions.telemetry;

import dev.runner.json.Json;
import dev.runner.metrics.Metrics;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * What the first publish of an invocation's records costs in a fresh JVM, Runner's Jackson already in use
 * (as in the functions by then): classes loaded, process CPU, wall, and a second publish. Run by hand
 * (docs/metrics.md, "Why not Powertools' emitter"), once per publisher and JVM:
 * {@code java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp <functions classes, test classes, lib/*> dev.runner.functions.telemetry.FirstFlushProbe handwritten|powertools}
 */
public final class FirstFlushProbe {
    public static void main(String[] args) {
        MetricsPublisher publisher = args[0].equals("powertools") ? new PowertoolsMetricsPublisher() : MetricsPublisher.EMF_ON_STDOUT;
        Json.parse(Json.write(Json.object().put("warm", 1)));  // the functions have used Runner's Jackson by then
        var records = records();
        PrintStream out = System.out;
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        var classes = ManagementFactory.getClassLoadingMXBean();
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long c0 = classes.getTotalLoadedClassCount(), cpu0 = os.getProcessCpuTime(), t0 = System.nanoTime();
        publisher.publish(records);
        long c1 = classes.getTotalLoadedClassCount(), cpu1 = os.getProcessCpuTime(), t1 = System.nanoTime();
        publisher.publish(records);
        long t2 = System.nanoTime();
        out.printf("%s classes=%d wallMs=%.1f cpuMs=%.1f secondMs=%.2f%n", args[0], c1 - c0, (t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6, (t2 - t1) / 1e6);
    }

    static java.util.List<MetricRecord> records() {
        var r = new MetricsRecording();
        r.itemsSettled(new Metrics.ItemBatch(3, 1, 0, Map.of("tenant_limit", 2), Set.of("t-1", "t-2")));
        r.handlerCall("crm", "leads", Duration.ofMillis(12), false);
        r.handlerCall("crm", "leads", Duration.ofMillis(30), true);
        r.breakerOpen("erp");
        r.runCompleted(UUID.randomUUID(), "t-1", Duration.ofSeconds(5));
        return r.records("fn-1", "req-1", true);
    }
}
