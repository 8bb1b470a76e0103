package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.api.ManagementApi;
import dev.runner.app.Runner;

/** The management API. */
public final class ApiFunction implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    private final ManagementApi api;
    private final Invocation invocation = new Invocation();

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public ApiFunction() {
        this(Invocation.lambdaRoot());
    }

    /** Builds, at init, only what this function uses (connections open on first use). */
    public ApiFunction(Runner runner) {
        this.api = runner.api();
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        return invocation.run(context, () -> ApiGatewayToCore.response(api.handle(ApiGatewayToCore.request(event))));
    }
}
