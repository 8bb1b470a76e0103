package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.webhook.WebhookService;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Signed webhooks into runs on the highest tier. */
public final class WebhookFunction implements RequestStreamHandler {

    /** Webhook items go to the webhook tier only; the database and the Redis AUTH token. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.ITEMS_WEBHOOK)
            .reading(SecretRole.DATABASE, SecretRole.REDIS_AUTH);

    private final WebhookService webhooks;
    private final Invocation<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public WebhookFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(WebhookFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public WebhookFunction(Runner runner) {
        this.webhooks = runner.serve(GRANTS).webhooks();
        this.invocation = new Invocation<>(runner, APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> ApiGatewayToCore.handle(event, webhooks::handle));
    }
}
