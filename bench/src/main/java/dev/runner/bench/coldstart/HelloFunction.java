package dev.runner.bench.coldstart;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;

import java.util.Map;

/**
 * The baseline of the cold-start benchmark: a handler that builds nothing and answers at once,
 * started exactly as the functions are (same runtime client, flags and task-root layout).
 */
public final class HelloFunction implements RequestHandler<Map<String, Object>, String> {

    @Override
    public String handleRequest(Map<String, Object> event, Context context) {
        return "hello " + event.size();
    }
}
