package dev.runner.bench.coldstart;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What one cold start runs: a handler in a task root, with its function's memory, timeout and
 * environment (the template's variables pointed at the benchmark's servers), and JVM options
 * beyond the runtime's own (what a setup under comparison adds).
 *
 * @param logicalId the template's name of the function, or {@code Hello} for the baseline
 */
record Subject(String logicalId, String name, String handler, String arn, int memoryMb, Duration timeout,
               Path taskRoot, Map<String, String> environment, List<String> jvmOptions) {

    Subject {
        environment = Map.copyOf(environment);
        jvmOptions = List.copyOf(jvmOptions);
    }

    /** The label in the table: the function without its {@code Function} suffix. */
    String label() {
        return logicalId.endsWith("Function") ? logicalId.substring(0, logicalId.length() - "Function".length()) : logicalId;
    }
}
