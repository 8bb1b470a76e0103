package dev.runner.bench.coldstart;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;

import java.util.List;

/**
 * A baseline that takes what the queue functions take: an SQS event, deserialised by the runtime
 * client's own serializer. Beside {@link HelloFunction} it shows what that serializer costs.
 */
public final class HelloSqsFunction implements RequestHandler<SQSEvent, SQSBatchResponse> {

    @Override
    public SQSBatchResponse handleRequest(SQSEvent event, Context context) {
        return SQSBatchResponse.builder().withBatchItemFailures(List.of()).build();
    }
}
