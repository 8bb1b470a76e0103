package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.app.Runner;

import java.util.Map;

/** Signed webhooks into runs on the highest tier. */
public final class WebhookFunction implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    private final Runner runner;

    /** Lambda's constructor: the environment the template gives the function. */
    public WebhookFunction() {
        this(System.getenv());
    }

    /** The local runtime's: the same environment, handed over explicitly. */
    public WebhookFunction(Map<String, String> environment) {
        this(Runner.forEnvironment(environment));
    }

    public WebhookFunction(Runner runner) {
        this.runner = runner;
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        return HttpEvents.response(runner.webhooks().handle(HttpEvents.request(event)));
    }
}
