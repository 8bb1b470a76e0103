package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import dev.runner.app.Runner;
import dev.runner.functions.telemetry.InvocationContextMap;
import dev.runner.functions.telemetry.InvocationMetrics;
import dev.runner.functions.telemetry.LogLevels;
import org.slf4j.MDC;
import software.amazon.lambda.powertools.logging.PowertoolsLogging;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PushbackInputStream;
import java.io.UncheckedIOException;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every function does around its work, one instance per function instance (execution
 * environment): for the invocation's length, every log line carries the request id, the function's
 * name and version and whether this was the environment's first invocation (Powertools' logging
 * context, held per invocation by {@link InvocationContextMap}), and what the work reports to its
 * metrics is published once at the end, its Function dimension the function's name. The event
 * and the answer are the event library's types, read and written by {@link LambdaSerialization}.
 *
 * @param <E> the event type
 * @param <A> the answer type
 */
final class Invocation<E, A> {

    private final AtomicBoolean cold = new AtomicBoolean(true);
    /** The function's root; null for Migrate, which builds nothing before its event. */
    private final Runner root;
    private final LambdaSerialization<E> events;
    private final LambdaSerialization<A> answers;
    private SnapStartHooks snapStart;

    /** {@code root} null: Migrate's, which builds nothing before its event. */
    Invocation(Runner root, Class<E> eventType, Class<A> answerType) {
        this.root = root;
        this.events = LambdaSerialization.of(eventType);
        this.answers = LambdaSerialization.of(answerType);
    }

    /** Lambda's composition root: the environment the template gives the function, metrics per invocation; log levels from it first. */
    static Runner lambdaRoot() {
        LogLevels.fromSystem();
        return Runner.fromEnvironment(System.getenv(), InvocationMetrics.INSTANCE);
    }

    /**
     * For Lambda's constructor, after the function built what it uses: the connections of its main
     * path start opening on other threads while the runtime client gets ready and the first event
     * arrives, the metrics' writer, the event's serializers and Powertools' logging are primed on
     * another, and the SnapStart hooks are registered (and held here, for as long as the function
     * lives), which also prime {@code function}'s classes before a checkpoint.
     * {@code -Drunner.openAtInit=false} leaves it all out, for the cold-start bench to compare.
     */
    void openAtInit(Class<?> function, Runner.Connection... mainPath) {
        if (Boolean.parseBoolean(System.getProperty("runner.openAtInit", "true"))) {
            snapStart = SnapStartHooks.openAndRegister(root, function, Set.of(mainPath), () -> {
                InvocationMetrics.primePublisher();
                AwsSdkPriming.run(Set.of(mainPath).contains(Runner.Connection.QUEUES));
                if (root != null) {
                    root.primeHandlerCalls();
                }
                events.prime();
                answers.prime();
                // Loads Powertools' logging and its Log4j manager; the context it clears is this thread's, empty.
                PowertoolsLogging.clearState(true);
            });
        }
    }

    /**
     * A stream handler's invocation: Lambda's event JSON in, read into its type and handed to
     * {@code work}, and its answer's JSON out, the reading and the work inside {@link #run}. An
     * empty stream is a null event, which every function takes as an empty one.
     */
    void stream(InputStream input, OutputStream output, Context context, Function<E, A> work) throws IOException {
        A answer = run(context, () -> work.apply(read(input)));
        answers.write(answer, output);
    }

    private E read(InputStream input) {
        try {
            var stream = new PushbackInputStream(input);
            int first = stream.read();
            if (first < 0) {
                return null;
            }
            stream.unread(first);
            return events.read(stream);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the event", e);
        }
    }

    <T> T run(Context context, Supplier<T> work) {
        boolean coldStart = cold.getAndSet(false);
        String function = context.getFunctionName();
        InvocationContextMap.startHere();
        return PowertoolsLogging.withLogging(context, () -> {
            // This function's first invocation, not the JVM's (the local runtime runs every function in one).
            MDC.put("cold_start", Boolean.toString(coldStart));
            try (var metrics = InvocationMetrics.INSTANCE.start(function == null ? "unknown" : function, context.getAwsRequestId(), coldStart)) {
                return work.get();
            }
        });
    }
}
