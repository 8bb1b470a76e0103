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

/** Signed webhooks into runs on the highest tier; handlers' callbacks for their pending items ({@code POST /callbacks/{token}}). */
public final class WebhookFunction implements RequestStreamHandler {

    /**
     * Webhook items go to the webhook tier; a callback settles its item as its worker would, so a retry goes back to the
     * item's own tier and a final failure to the items DLQ. The database, the Redis AUTH token, the callback key.
     */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.itemsTiers()).sendingTo(QueueRole.ITEMS_DLQ)
            .reading(SecretRole.DATABASE, SecretRole.REDIS_AUTH, SecretRole.CALLBACK_KEY);

    private final WebhookService webhooks;
    private final Runner runner;
    private final Invocation<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public WebhookFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(WebhookFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public WebhookFunction(Runner runner) {
        this.webhooks = runner.serve(GRANTS).webhooks();
        this.runner = runner;
        this.invocation = new Invocation<>(runner, APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        // The callback route's parts are built on its first request: the callback key is read then, never into a snapshot.
        invocation.stream(input, output, context, event -> ApiGatewayToCore.handle(event, request -> request.pathParameter("token") != null
                ? runner.callbackEndpoint().handle(request) : webhooks.handle(request)));
    }
}
