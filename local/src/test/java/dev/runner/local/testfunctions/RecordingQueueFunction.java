package dev.runner.local.testfunctions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Records each batch; a message whose body is {@code fail} is reported as a batch item failure,
 * a body {@code throw} makes the whole invocation throw, a body {@code bogus} reports a failure
 * with an id that is not in the batch.
 */
public final class RecordingQueueFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    private final Map<String, String> environment;

    public RecordingQueueFunction() {
        this(System.getenv());
    }

    public RecordingQueueFunction(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        Recorder.record(context.getFunctionName(),
                new Recorder.Invocation(event, environment, context.getRemainingTimeInMillis(), context.getFunctionName()));
        List<SQSBatchResponse.BatchItemFailure> failures = new ArrayList<>();
        for (SQSEvent.SQSMessage message : event.getRecords()) {
            if (message.getBody().equals("throw")) {
                throw new IllegalStateException("asked to throw");
            }
            if (message.getBody().equals("bogus")) {
                failures.add(new SQSBatchResponse.BatchItemFailure("not-a-message-of-this-batch"));
            }
            if (message.getBody().equals("fail")) {
                failures.add(new SQSBatchResponse.BatchItemFailure(message.getMessageId()));
            }
        }
        return new SQSBatchResponse(failures);
    }
}
