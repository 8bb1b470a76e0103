package dev.runner.local.template;

import java.time.Duration;

/** What invokes a function: the event kinds the local runtime wires. */
public sealed interface EventSource {

    /** A descriptive name for logs: the template's event name or the mapping resource. */
    String name();

    /**
     * An HTTP API route (payload format 2.0).
     *
     * @param method upper case, or {@code ANY}
     * @param path   {@code /a/{param}/{rest+}}, or {@code $default}
     */
    record HttpRoute(String name, String method, String path) implements EventSource {
        public String routeKey() {
            return path.equals("$default") ? "$default" : method + " " + path;
        }
    }

    /**
     * An EventBridge schedule.
     *
     * @param expression {@code rate(…)} or {@code cron(…)}
     * @param input      constant JSON input replacing the event, or null
     */
    record Schedule(String name, String expression, String input) implements EventSource {}

    /** An SQS event source mapping, with the knobs Lambda's poller honours. */
    record Queue(String name, String queueArn, int batchSize, Duration batchingWindow, int maximumConcurrency,
                 boolean reportBatchItemFailures) implements EventSource {
        public Queue {
            if (batchSize < 1 || batchSize > 10_000) {
                throw new TemplateException(name + ": BatchSize out of 1..10000: " + batchSize);
            }
            if (batchSize > 10 && batchingWindow.isZero()) {
                throw new TemplateException(name + ": BatchSize > 10 needs MaximumBatchingWindowInSeconds >= 1");
            }
            if (maximumConcurrency < 1) {
                throw new TemplateException(name + ": MaximumConcurrency < 1: " + maximumConcurrency);
            }
        }

        public String queueName() {
            return queueArn.substring(queueArn.lastIndexOf(':') + 1);
        }
    }
}
