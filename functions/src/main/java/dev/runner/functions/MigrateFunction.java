package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import dev.runner.app.Grants;
import dev.runner.app.Runner;
import dev.runner.config.SecretRole;
import dev.runner.functions.CloudFormationResponse.Status;
import dev.runner.functions.telemetry.LogLevels;
import dev.runner.log.Log;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The CloudFormation custom resource that applies schema migrations on deploy (template.yaml
 * {@code Migration}). Create and Update apply what is pending (Flyway is idempotent); Delete leaves
 * the schema alone. Whatever happens, the answer goes to the pre-signed ResponseURL, or the stack
 * would wait for the whole ServiceTimeout: a failed migration answers FAILED, which fails and rolls
 * back the deploy, with the cause as the reason CloudFormation shows in the stack's events.
 */
public final class MigrateFunction implements RequestStreamHandler {

    static final String PHYSICAL_ID = "runner-schema";
    private static final Log LOG = Log.of(MigrateFunction.class);

    /** The owner's login, and each runtime role's login secret (to give the roles their logins). */
    public static final Grants GRANTS = Grants.none().reading(SecretRole.DATABASE, SecretRole.DATABASE_LOGINS);

    private final Map<String, String> environment;
    private final Consumer<Map<String, String>> migrations;
    private final CloudFormationResponse response;
    private final Invocation<CloudFormationCustomResourceEvent, Map<String, String>> invocation = new Invocation<>(null,
            CloudFormationCustomResourceEvent.class, answerType());

    /** Lambda's constructor: connects nowhere; the metrics' writer is primed for a SnapStart snapshot (no class list: it runs once per deploy). */
    public MigrateFunction() {
        this(System.getenv());
        LogLevels.fromSystem();
        invocation.openAtInit(MigrateFunction.class);
    }

    /** Nothing is read or opened until a Create or Update arrives: a bad environment still gets its answer to CloudFormation. */
    public MigrateFunction(Map<String, String> environment) {
        this(environment, MigrateFunction::migrate, Duration.ofSeconds(2));
    }

    /** {@code migrations} applies the schema for an environment; {@code retryDelay} spaces the retries of the answer. */
    MigrateFunction(Map<String, String> environment, Consumer<Map<String, String>> migrations, Duration retryDelay) {
        this.environment = Map.copyOf(environment);
        this.migrations = migrations;
        this.response = new CloudFormationResponse(retryDelay);
    }

    @Override
    public void handleRequest(InputStream input, OutputStream output, Context context) throws IOException {
        invocation.stream(input, output, context, event -> migrate(event, context));
    }

    /** What the function answers besides what it sends CloudFormation: its status, reason and id. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Class<Map<String, String>> answerType() {
        return (Class) Map.class;
    }

    private Map<String, String> migrate(CloudFormationCustomResourceEvent event, Context context) {
        if (event == null) {
            event = new CloudFormationCustomResourceEvent();
        }
        String requestType = event.getRequestType();
        if (requestType == null) {
            requestType = "Create";
        }
        Status status = Status.SUCCESS;
        String reason = "Delete".equals(requestType) ? "schema left in place" : "schema migrated";
        if (!"Delete".equals(requestType)) {
            try {
                requireDatabase();
                migrations.accept(environment);
            } catch (RuntimeException | LinkageError e) {
                // Anything short of the JVM dying: an exception escaping here would leave the
                // stack waiting for an answer that never comes.
                LOG.error("migration failed", "requestType", requestType, "error", e);
                status = Status.FAILED;
                reason = "Migration failed (log stream " + context.getLogStreamName() + "): " + causes(e);
            }
        }
        byte[] body = CloudFormationResponse.body(event, status, reason, PHYSICAL_ID);
        if (event.getResponseUrl() != null) {
            response.send(event.getResponseUrl(), body);
        }
        Map<String, String> answer = new LinkedHashMap<>();
        answer.put("Status", status.name());
        answer.put("Reason", reason);
        answer.put("PhysicalResourceId", PHYSICAL_ID);
        return answer;
    }

    private void requireDatabase() {
        String url = environment.get("RUNNER_DATABASE_URL");
        if (url == null || url.isBlank()) {
            throw new IllegalStateException("RUNNER_DATABASE_URL is not set: the function has no database to migrate");
        }
    }

    /** With the login its secret holds (read now, so a rotated password is the one used). */
    private static void migrate(Map<String, String> environment) {
        try (Runner runner = Runner.fromEnvironment(environment)) {
            runner.serve(GRANTS).migrate();
        }
    }

    /** The messages of the exception and its causes, outermost first: Flyway wraps the SQL error. */
    private static String causes(Throwable error) {
        var text = new StringBuilder();
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (!text.isEmpty()) {
                text.append(" <- ");
            }
            text.append(cause.getClass().getSimpleName()).append(": ").append(cause.getMessage());
        }
        return text.toString();
    }
}
