package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import dev.runner.api.ManagementApi;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.QueueRole;
import dev.runner.config.SecretRole;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** The management API. */
public final class ApiFunction implements RequestStreamHandler {

    /** Manual runs' RunJobs; redrive and resume send items of any tier; the admin key. */
    public static final Grants GRANTS = Grants.none()
            .sendingTo(QueueRole.RUNS_MANUAL).sendingTo(QueueRole.itemsTiers())
            // GET /queues: every queue's depth.
            .readingAttributesOf(QueueRole.values())
            .reading(SecretRole.DATABASE, SecretRole.API_KEY, SecretRole.REDIS_AUTH);

    private final ManagementApi api;
    private final Invocation<APIGatewayV2HTTPEvent, APIGatewayV2HTTPResponse> invocation;

    /** Lambda's constructor: a root for the environment the template gives the function; its connections start opening at once. */
    public ApiFunction() {
        this(Invocation.lambdaRoot());
        invocation.openAtInit(ApiFunction.class, Runner.Connection.DATABASE, Runner.Connection.REDIS, Runner.Connection.QUEUES);
    }

    /** Binds its grants, then builds, at init, only what this function uses (connections open on first use). */
    public ApiFunction(Runner runner) {
        this.api = runner.serve(GRANTS).api();
        this.invocation = new Invocation<>(runner, APIGatewayV2HTTPEvent.class, APIGatewayV2HTTPResponse.class);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> ApiGatewayToCore.handle(event, api::handle));
    }
}
