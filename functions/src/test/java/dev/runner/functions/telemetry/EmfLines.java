package dev.runner.functions.telemetry;

import com.fasterxml.jackson.core.JsonProcessingException;
import software.amazon.cloudwatchlogs.emf.environment.Environment;
import software.amazon.cloudwatchlogs.emf.environment.EnvironmentProvider;
import software.amazon.cloudwatchlogs.emf.environment.LambdaEnvironment;
import software.amazon.cloudwatchlogs.emf.model.MetricsContext;
import software.amazon.cloudwatchlogs.emf.sinks.ISink;
import software.amazon.lambda.powertools.metrics.internal.EmfMetricsLogger;

import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The functions' EMF lines, as Powertools writes them in Lambda, into a sink instead of stdout: for
 * tests that read what was published. Powertools' own instances (its EmfMetricsLogger) in Lambda's
 * EMF environment, with only the sink replaced.
 */
public final class EmfLines {

    private EmfLines() {}

    /** A publisher whose EMF lines go to {@code sink}. */
    public static MetricsPublisher into(Consumer<String> sink) {
        Environment lambda = new LambdaEnvironment() {
            @Override
            public ISink getSink() {
                return new ISink() {
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
}
