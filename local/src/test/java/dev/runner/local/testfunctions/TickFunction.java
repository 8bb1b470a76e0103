package dev.runner.local.testfunctions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;

import java.util.Map;

/** Records every scheduled event. */
public final class TickFunction implements RequestHandler<ScheduledEvent, Void> {

    private final Map<String, String> environment;

    public TickFunction(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public Void handleRequest(ScheduledEvent event, Context context) {
        Recorder.record(context.getFunctionName(),
                new Recorder.Invocation(event, environment, context.getRemainingTimeInMillis(), context.getFunctionName()));
        return null;
    }
}
