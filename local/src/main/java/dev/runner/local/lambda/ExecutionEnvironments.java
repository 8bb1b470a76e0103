package dev.runner.local.lambda;

import java.lang.reflect.InvocationTargetException;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * A function's execution environments, as Lambda keeps them: handler instances built on demand
 * from the function's variables, each serving one invocation at a time, reused once idle.
 */
final class ExecutionEnvironments implements AutoCloseable {

    private final String logicalId;
    private final Class<?> type;
    private final Map<String, String> environment;
    private final LocalFunction.Instantiator instantiator;
    private final ConcurrentLinkedDeque<Object> idle = new ConcurrentLinkedDeque<>();
    private final ConcurrentLinkedDeque<Object> all = new ConcurrentLinkedDeque<>();

    ExecutionEnvironments(String logicalId, Class<?> type, Map<String, String> environment, LocalFunction.Instantiator instantiator) {
        this.logicalId = logicalId;
        this.type = type;
        this.environment = Map.copyOf(environment);
        this.instantiator = instantiator;
    }

    Class<?> type() {
        return type;
    }

    Map<String, String> environment() {
        return environment;
    }

    /** Builds one instance now, kept idle: a missing class or a failing cold start shows before the first event. */
    void startOne() {
        idle.push(newInstance());
    }

    /** An idle instance, or a new one (a cold start) when none is idle. */
    Object take() {
        Object handler = idle.poll();
        return handler != null ? handler : newInstance();
    }

    /** The instance's invocation ended: it serves the next. */
    void giveBack(Object handler) {
        idle.push(handler);
    }

    @Override
    public void close() {
        for (Object handler : all) {
            if (handler instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    System.err.println(logicalId + " did not close cleanly: " + e);
                }
            }
        }
        all.clear();
        idle.clear();
    }

    private Object newInstance() {
        try {
            Object handler = instantiator.newInstance(type, environment);
            all.add(handler);
            return handler;
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            throw new LocalFunction.FunctionLoadException(logicalId + ": " + type.getName() + " failed to start: " + cause, cause);
        } catch (NoSuchMethodException e) {
            throw new LocalFunction.FunctionLoadException(logicalId + ": " + type.getName()
                    + " has no public constructor this runtime can call: " + e.getMessage());
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new LocalFunction.FunctionLoadException(logicalId + ": cannot construct " + type.getName() + ": " + e, e);
        }
    }
}
