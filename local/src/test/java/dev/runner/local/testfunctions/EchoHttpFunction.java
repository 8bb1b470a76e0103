package dev.runner.local.testfunctions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;

import java.util.Map;

/** Records the HTTP event and answers 201 with the body it got, plus a header naming the route. */
public final class EchoHttpFunction implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    private final Map<String, String> environment;

    public EchoHttpFunction(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        Recorder.record(context.getFunctionName(),
                new Recorder.Invocation(event, environment, context.getRemainingTimeInMillis(), context.getFunctionName()));
        if ("boom".equals(event.getBody())) {
            throw new IllegalStateException("asked to fail");
        }
        return APIGatewayV2HTTPResponse.builder()
                .withStatusCode(201)
                .withHeaders(Map.of("Content-Type", "text/plain", "X-Route", event.getRouteKey()))
                .withBody(event.getBody())
                .withIsBase64Encoded(event.getIsBase64Encoded())
                .build();
    }
}
