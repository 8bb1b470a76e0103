package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestHandler;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.SecretRole;
import dev.runner.json.Json;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * The CloudFormation custom resource that applies schema migrations on deploy. Create and Update
 * apply what is pending (Flyway is idempotent); Delete leaves the schema alone. The answer goes to
 * the pre-signed ResponseURL, always, or the stack would wait an hour for it.
 */
public final class MigrateFunction implements RequestHandler<Map<String, Object>, Map<String, Object>> {

    static final String PHYSICAL_ID = "runner-schema";

    /** The database login only. */
    public static final Grants GRANTS = Grants.none().reading(SecretRole.DATABASE);

    private final Runner runner;

    /** Lambda's constructor: a root for the environment the template gives the function. */
    public MigrateFunction() {
        this(Runner.fromEnvironment(System.getenv()));
    }

    /** Nothing is read or opened until a Create or Update arrives. */
    public MigrateFunction(Runner runner) {
        this.runner = runner.serve(GRANTS);
    }

    @Override
    public Map<String, Object> handleRequest(Map<String, Object> event, Context context) {
        String requestType = String.valueOf(event.getOrDefault("RequestType", "Create"));
        String status = "SUCCESS";
        String reason = "schema migrated";
        if (!"Delete".equals(requestType)) {
            try {
                runner.migrate();
            } catch (RuntimeException e) {
                status = "FAILED";
                reason = "migration failed: " + e.getMessage();
            }
        }
        Map<String, Object> answer = Map.of("Status", status, "Reason", reason, "PhysicalResourceId", PHYSICAL_ID,
                "StackId", String.valueOf(event.get("StackId")), "RequestId", String.valueOf(event.get("RequestId")),
                "LogicalResourceId", String.valueOf(event.get("LogicalResourceId")));
        Object responseUrl = event.get("ResponseURL");
        if (responseUrl != null) {
            respond(responseUrl.toString(), answer);
        }
        return answer;
    }

    private static void respond(String url, Map<String, Object> answer) {
        var body = Json.object();
        answer.forEach((key, value) -> body.put(key, String.valueOf(value)));
        // The pre-signed S3 URL is signed for an empty content type.
        var request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "")
                .PUT(HttpRequest.BodyPublishers.ofString(Json.write(body))).build();
        try {
            HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.discarding());
        } catch (java.io.IOException e) {
            throw new IllegalStateException("could not answer CloudFormation: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted answering CloudFormation", e);
        }
    }
}
