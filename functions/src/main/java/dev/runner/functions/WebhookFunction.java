package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;
import dev.runner.webhook.WebhookService;

/** Signed webhooks into runs on the highest tier. */
public final class WebhookFunction implements RequestHandler<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> {

    /** Webhook items go to the webhook tier only; the database and the Redis AUTH token. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.ITEMS_WEBHOOK)
            .reading(SecretRole.DATABASE, SecretRole.REDIS_AUTH);

    private final WebhookService webhooks;
    private final Invocation invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public WebhookFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public WebhookFunction(Runner runner) {
        this.webhooks = runner.serve(GRANTS).webhooks();
        this.invocation = new Invocation(runner);
    }

    @Override
    public APIGatewayV2HTTPResponse handleRequest(APIGatewayV2HTTPEvent event, Context context) {
        return invocation.run(context, () -> ApiGatewayToCore.handle(event, webhooks::handle));
    }
}
