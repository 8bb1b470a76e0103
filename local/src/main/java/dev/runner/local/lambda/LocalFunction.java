package dev.runner.local.lambda;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.local.template.FunctionDefinition;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A template function running in this JVM. Like Lambda, one handler instance serves one
 * invocation at a time: concurrent invocations get their own instances (execution
 * environments), created on demand and reused. Each instance is built by an {@link Instantiator}
 * from the variables the template gives the function, so it sees exactly those.
 *
 * <p>A {@link RequestStreamHandler} is invoked as Lambda invokes it: the source's event written as
 * the JSON Lambda sends, its answer read back into what the source reads, both with the runtime
 * client's serialization ({@link RuntimeSerialization}). A typed {@link RequestHandler} gets the
 * source's event object itself, as the runtime client would have read it from that JSON.
 */
public final class LocalFunction implements AutoCloseable {

    /** How an invocation ended: the handler's answer, or the error Lambda would report. */
    public sealed interface Outcome {
        record Returned(Object value) implements Outcome {}

        record Failed(String errorType, String message, Throwable cause) implements Outcome {}
    }

    /** Builds one instance of a handler class (one execution environment) for its environment. */
    @FunctionalInterface
    public interface Instantiator {
        Object newInstance(Class<?> type, Map<String, String> environment) throws ReflectiveOperationException;

        /** The handler's public constructor taking the environment map ({@code Map<String, String>}). */
        Instantiator BY_ENVIRONMENT = (type, environment) -> type.getConstructor(Map.class).newInstance(environment);
    }

    private final FunctionDefinition definition;
    private final String arn;
    private final ExecutionEnvironments environments;
    private final Class<?> type;
    private final Clock clock;
    private final InvocationMeter meter;

    private LocalFunction(FunctionDefinition definition, String arn, ExecutionEnvironments environments, Clock clock, InvocationMeter meter) {
        this.definition = definition;
        this.arn = arn;
        this.environments = environments;
        this.type = environments.type();
        this.clock = clock;
        this.meter = meter;
    }

    /**
     * Loads the handler class and builds a first instance now, so a missing class or a failing
     * cold start stops the runtime before it reports READY rather than on the first event.
     */
    public static LocalFunction load(FunctionDefinition definition, String arn, Map<String, String> environment, Clock clock) {
        return load(definition, arn, environment, clock, Instantiator.BY_ENVIRONMENT);
    }

    /** Unmeasured: no invocation is sampled (tools that invoke a function outside a runtime). */
    public static LocalFunction load(FunctionDefinition definition, String arn, Map<String, String> environment, Clock clock,
                                     Instantiator instantiator) {
        return load(definition, arn, environment, clock, instantiator, new InvocationMeter(0));
    }

    public static LocalFunction load(FunctionDefinition definition, String arn, Map<String, String> environment, Clock clock,
                                     Instantiator instantiator, InvocationMeter meter) {
        Class<?> type;
        try {
            type = Class.forName(definition.handlerClass(), true, LocalFunction.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new FunctionLoadException(definition.logicalId() + ": handler class " + definition.handlerClass()
                    + " is not on the classpath");
        }
        if (!RequestHandler.class.isAssignableFrom(type) && !RequestStreamHandler.class.isAssignableFrom(type)) {
            throw new FunctionLoadException(definition.logicalId() + ": " + type.getName() + " implements neither"
                    + " com.amazonaws.services.lambda.runtime.RequestHandler nor RequestStreamHandler");
        }
        var environments = new ExecutionEnvironments(definition.logicalId(), type, environment, instantiator);
        environments.startOne();
        return new LocalFunction(definition, arn, environments, clock, meter);
    }

    public String logicalId() {
        return definition.logicalId();
    }

    public String name() {
        return definition.name();
    }

    public String arn() {
        return arn;
    }

    public int memoryMb() {
        return definition.memoryMb();
    }

    public Duration timeout() {
        return definition.timeout();
    }

    public Map<String, String> environment() {
        return environments.environment();
    }

    /**
     * The event type the handler declares, when it can be read from its generic signature; Object
     * for a stream handler, which takes any JSON and reads what it needs itself.
     */
    public Class<?> inputType() {
        return inputType(type);
    }

    /**
     * Checks that the handler accepts what an event source delivers; fails the start if not. Only
     * a typed handler says what it takes: a stream handler passes (it reads the event's JSON
     * itself), as long as the source's event is one the runtime client can write as JSON.
     */
    public void requireInput(Class<?> eventType, String source) {
        if (RequestStreamHandler.class.isAssignableFrom(type)) {
            try {
                RuntimeSerialization.prepare(eventType);
            } catch (RuntimeException e) {
                throw new FunctionLoadException(logicalId() + ": " + source + " delivers " + eventType.getSimpleName()
                        + ", which the runtime client cannot write as JSON for the stream handler " + type.getName() + ": " + e, e);
            }
            return;
        }
        Class<?> declared = inputType();
        if (!declared.isAssignableFrom(eventType)) {
            throw new FunctionLoadException(logicalId() + ": " + source + " delivers " + eventType.getSimpleName()
                    + " but " + type.getName() + " takes " + declared.getName());
        }
    }

    /**
     * Invokes the handler once; an invocation running past the Timeout counts as failed, as in Lambda.
     *
     * @param answerType what the source reads a stream handler's JSON answer as (Object: any JSON); an answer
     *                   that is not that JSON fails the invocation, as the source would refuse it
     */
    public Outcome invoke(Object event, Class<?> answerType) {
        int records = event instanceof SQSEvent sqs && sqs.getRecords() != null
                ? sqs.getRecords().size() : 1;
        // Writing the event and reading the answer are Lambda's work, not the function's: outside its measured CPU.
        byte[] json = RequestStreamHandler.class.isAssignableFrom(type) ? RuntimeSerialization.toJson(event) : null;
        Outcome outcome = meter.measure(logicalId(), memoryMb(), records, () -> invokeNow(event, json));
        return outcome instanceof Outcome.Returned(Answer(byte[] answer)) ? answer(answer, answerType) : outcome;
    }

    /** A stream handler's answer, as it wrote it: read by {@link #answer} once the invocation is measured. */
    private record Answer(byte[] json) {}

    private Outcome invokeNow(Object event, byte[] json) {
        Object handler;
        try {
            handler = environments.take();
        } catch (FunctionLoadException e) {
            return new Outcome.Failed("Runtime.InitError", e.getMessage(), e);
        }
        Instant start = clock.instant();
        Instant deadline = start.plus(definition.timeout());
        try {
            Context context = new LocalContext(this, deadline, clock);
            Object result;
            byte[] answer = null;
            if (handler instanceof RequestStreamHandler stream) {
                var output = new ByteArrayOutputStream(1024);
                stream.handleRequest(new ByteArrayInputStream(json), output, context);
                answer = output.toByteArray();
                result = null;
            } else {
                @SuppressWarnings("unchecked")
                var typed = (RequestHandler<Object, Object>) handler;
                result = typed.handleRequest(event, context);
            }
            if (clock.instant().isAfter(deadline)) {
                return new Outcome.Failed("Sandbox.Timedout",
                        "Task timed out after " + definition.timeout().toMillis() / 1000.0 + " seconds", null);
            }
            return new Outcome.Returned(answer == null ? result : new Answer(answer));
        } catch (IOException e) {
            return new Outcome.Failed(e.getClass().getName(), String.valueOf(e.getMessage()), e);
        } catch (RuntimeException | Error e) {
            return new Outcome.Failed(e.getClass().getName(), String.valueOf(e.getMessage()), e);
        } finally {
            environments.giveBack(handler);
        }
    }

    /** A stream handler's answer as the source reads it; none (an empty answer) is null, as Lambda returns nothing. */
    private Outcome answer(byte[] json, Class<?> answerType) {
        if (json.length == 0) {
            return new Outcome.Returned(null);
        }
        try {
            return new Outcome.Returned(RuntimeSerialization.fromJson(json, answerType));
        } catch (RuntimeException e) {
            return new Outcome.Failed("Runtime.InvalidAnswer", logicalId() + " answered what is not JSON of "
                    + answerType.getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        environments.close();
    }

    private static Class<?> inputType(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Type candidate : c.getGenericInterfaces()) {
                if (candidate instanceof ParameterizedType parameterized
                        && parameterized.getRawType() == RequestHandler.class
                        && parameterized.getActualTypeArguments()[0] instanceof Class<?> input) {
                    return input;
                }
            }
        }
        return Object.class;
    }

    /** The function cannot be loaded or started; the message says which and why. */
    public static final class FunctionLoadException extends RuntimeException {
        public FunctionLoadException(String message) {
            super(message);
        }

        public FunctionLoadException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
