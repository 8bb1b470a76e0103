package dev.runner.bench.coldstart;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.serialization.events.LambdaEventSerializers;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.config.RunnerConfig;
import dev.runner.config.SecretRole;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.json.Json;
import dev.runner.local.iam.LocalIam;
import dev.runner.local.lambda.LocalFunction;
import dev.runner.local.secrets.LocalSecretsManager;
import dev.runner.local.sqs.QueueProvisioner;
import dev.runner.local.template.FunctionDefinition;
import dev.runner.local.template.Intrinsics;
import dev.runner.local.template.Template;
import dev.runner.security.StandardWebhooks;
import dev.runner.store.Credentials;
import dev.runner.store.Database;
import dev.runner.store.DatabaseRole;
import dev.runner.testing.FakeHandler;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * The world the measured functions start into, set up once: embedded Postgres (migrated), Redis
 * and ElasticMQ with the template's queues, a handler service, and the integration the events/
 * files name ({@code crm-x} / {@code leads-import} for tenant {@code t-demo}). For each function
 * it makes a fresh event from its events/ file that takes the function's main path: a signed
 * webhook, a RunJob of a run that exists, an item job of an item that is queued, and so on.
 * Runs and items are made by the functions themselves, invoked in this JVM.
 */
final class ColdStartStack implements AutoCloseable {

    /** The bearer key events/api-*.json carry. */
    static final String API_KEY = "local-dev-key";
    private static final String TENANT = "t-demo";
    private static final String INTEGRATION = "crm-x";
    private static final String HANDLER = "leads-import";
    private static final String WEBHOOK_SECRET = "coldstart-webhook-secret";
    private static final String SIGNING_SECRET = "coldstart-signing-secret";
    /** The key the items' callback URLs are signed with (RUNNER_CALLBACK_KEY_SECRET's value). */
    private static final String CALLBACK_SECRET = "coldstart-callback-secret";
    private static final String LOCAL_KEY = "local";

    private final Path events;
    private final EmbeddedServers servers;
    private final SqsClient sqs;
    private final FakeHandler handlers;
    private final Intrinsics.Stack stack = Intrinsics.Stack.local();
    private final Map<String, String> queueUrls;
    private final Map<String, FunctionDefinition> functions = new LinkedHashMap<>();
    private final Map<String, LocalFunction> inProcess = new LinkedHashMap<>();
    /** The secrets the template's functions read at run time, served as Secrets Manager serves them. */
    private final LocalSecretsManager secrets;
    private final Map<DatabaseRole, String> rolePasswords = rolePasswords();

    private ColdStartStack(Path template, Path events) {
        this.events = events;
        this.servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree());
        this.handlers = FakeHandler.start(SIGNING_SECRET);
        this.secrets = LocalSecretsManager.bind(0, new LocalIam(stack), Clock.systemUTC());
        secrets.start();
        handlers.handler(HANDLER).pages(1, 3);
        this.sqs = SqsClient.builder()
                .endpointOverride(URI.create(servers.endpoints().sqsEndpoint()))
                .region(Region.of(stack.region()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(LOCAL_KEY, LOCAL_KEY)))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
        Template parsed = Template.read(template, Map.of(), dynamicReferences());
        this.queueUrls = new QueueProvisioner(sqs).create(parsed.queues());
        queueUrls.forEach(parsed::queueCreated);
        parsed.functions().forEach(f -> functions.put(f.logicalId(), f));
        Database.migrate(new RunnerConfig.Database(servers.endpoints().jdbcUrl(), servers.endpoints().dbUser(),
                servers.endpoints().dbPassword()));
        // Each function logs in as its own role, as deployed; Migrate (measured like the others) gives the same logins again.
        Database.enableLogins(servers.endpoints().jdbcUrl(),
                Credentials.fixed(servers.endpoints().dbUser(), servers.endpoints().dbPassword()), rolePasswords::get);
    }

    /** Starts the servers and registers the integration the events name. */
    static ColdStartStack start(Path template, Path events) {
        var stack = new ColdStartStack(template, events);
        try {
            stack.register();
            return stack;
        } catch (RuntimeException e) {
            stack.close();
            throw e;
        }
    }

    /** The template's functions, in template order. */
    List<FunctionDefinition> functions() {
        return List.copyOf(functions.values());
    }

    /**
     * What a function sees: the template's variables, then the local endpoints. Secrets stay names, as
     * in AWS: the function reads them from the local Secrets Manager at run time, so its cold start
     * pays for that read as it would in Lambda.
     */
    Map<String, String> environment(FunctionDefinition function) {
        Map<String, String> env = new LinkedHashMap<>(function.environment());
        // The embedded Redis takes no AUTH token.
        env.remove(SecretRole.REDIS_AUTH.variable());
        createSecrets(env);
        var endpoints = servers.endpoints();
        env.put("RUNNER_DATABASE_URL", endpoints.jdbcUrl());
        env.put("RUNNER_REDIS_URL", endpoints.redisUrl());
        env.put("RUNNER_REDIS_MODE", "standalone");
        env.put("RUNNER_SQS_ENDPOINT", endpoints.sqsEndpoint());
        env.put("RUNNER_SECRETS_ENDPOINT", secrets.endpoint().toString());
        // The handler service listens on loopback.
        env.put("RUNNER_HANDLER_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128");
        env.put("AWS_REGION", stack.region());
        env.put("AWS_DEFAULT_REGION", stack.region());
        env.put("AWS_ACCESS_KEY_ID", LOCAL_KEY);
        env.put("AWS_SECRET_ACCESS_KEY", LOCAL_KEY);
        return env;
    }

    /**
     * What {@link FloorFunction} sees: {@code like}'s environment (the runtime's options, EMF's settings,
     * the servers' addresses), the parts it runs, and the database login in plain variables (the
     * floor reads no secret).
     */
    Map<String, String> floorEnvironment(FunctionDefinition like, List<FloorFunction.Part> parts) {
        Map<String, String> env = environment(like);
        env.put("RUNNER_FLOOR", FloorFunction.Part.names(parts));
        env.put("RUNNER_FLOOR_DB_USER", servers.endpoints().dbUser());
        env.put("RUNNER_FLOOR_DB_PASSWORD", servers.endpoints().dbPassword());
        return env;
    }

    private void createSecrets(Map<String, String> environment) {
        var endpoints = servers.endpoints();
        for (SecretRole role : SecretRole.values()) {
            String name = environment.get(role.variable());
            if (name == null || name.isBlank()) {
                continue;
            }
            if (role == SecretRole.DATABASE_LOGINS) {
                // Migrate gives each runtime role its login from these; the functions here log in as the owner.
                for (DatabaseRole login : DatabaseRole.values()) {
                    secrets.createIfAbsent(login.secretName(name), roleLogin(login));
                }
                continue;
            }
            secrets.createIfAbsent(name, switch (role) {
                case DATABASE -> databaseLogin(name);
                case API_KEY -> API_KEY;
                case HANDLER_SIGNING_KEY -> SIGNING_SECRET;
                case CALLBACK_KEY -> CALLBACK_SECRET;
                case REDIS_AUTH -> throw new IllegalStateException("the embedded Redis takes no AUTH token");
                case DATABASE_LOGINS -> throw new AssertionError("created above");
            });
        }
    }

    /** A function's own secret (the template names it after the function's role) holds that role's login; Migrate's, the owner's. */
    private String databaseLogin(String secretName) {
        for (DatabaseRole role : DatabaseRole.values()) {
            if (secretName.endsWith(role.roleName())) {
                return roleLogin(role);
            }
        }
        var endpoints = servers.endpoints();
        return LocalSecretsManager.json(Map.of("username", endpoints.dbUser(), "password", endpoints.dbPassword()));
    }

    private String roleLogin(DatabaseRole role) {
        return LocalSecretsManager.json(Map.of("username", role.roleName(), "password", rolePasswords.get(role)));
    }

    private static Map<DatabaseRole, String> rolePasswords() {
        Map<DatabaseRole, String> passwords = new java.util.EnumMap<>(DatabaseRole.class);
        for (DatabaseRole role : DatabaseRole.values()) {
            passwords.put(role, UUID.randomUUID().toString());
        }
        return Map.copyOf(passwords);
    }

    String arn(FunctionDefinition function) {
        return function.arn(stack);
    }

    /**
     * A fresh event for the function, from its events/ file, that takes its main path.
     *
     * @param cfnResponseUrl where MigrateFunction answers CloudFormation (the runtime API's stand-in for S3)
     */
    String event(String logicalId, String cfnResponseUrl) {
        return switch (logicalId) {
            case "WebhookFunction" -> webhook();
            case "ApiFunction" -> read("api-create-run.json").toString();
            case "SchedulerFunction" -> scheduledTick();
            case "RunWorkerFunction" -> sqsEvent("sqs-run-job.json", receive(queue("RunsManualQueue"), this::queueRun), "RunsManualQueue", null);
            case "ItemWorkerFunction" -> sqsEvent("sqs-item-job.json", receive(queue("ItemsManualQueue"), this::fanOutRun), "ItemsManualQueue", null);
            case "IngestFunction" -> ingest();
            case "DeadLetterFunction" -> sqsEvent("sqs-dlq.json", receive(queue("ItemsManualQueue"), this::fanOutRun), "ItemsDlq",
                    "attempt 3 of 3 failed: handler answered 503 Service Unavailable");
            case "MigrateFunction" -> {
                ObjectNode event = read("migrate.json");
                event.put("ResponseURL", cfnResponseUrl);
                event.put("RequestId", UUID.randomUUID().toString());
                yield event.toString();
            }
            case String hello when hello.equals("Hello") || hello.equals("HelloStream") || hello.startsWith(ColdStart.FLOOR + "-") ->
                    "{\"hello\":\"world\"}";
            case "HelloSqs" -> read("sqs-item-job.json").toString();
            default -> throw new IllegalArgumentException("no cold-start event for " + logicalId
                    + ": give it one in ColdStartStack.event (from an events/ file that takes its main path)");
        };
    }

    // ---- the integration and the events

    private void register() {
        ObjectNode type = Json.object().put("name", "CRM X");
        ObjectNode handler = type.putObject("handlers").putObject(HANDLER);
        handler.put("url", handlers.url(HANDLER)).put("direction", "inbound").put("batch", true);
        handler.putObject("configs").put("batch_size", 10);
        api("PUT", "/types/{integrationKey}", "/types/" + INTEGRATION, Map.of("integrationKey", INTEGRATION), type);
        ObjectNode tenant = Json.object().put("enabled", true).put("webhookSecret", WEBHOOK_SECRET);
        tenant.putObject("schedules").put(HANDLER, "rate(1 day)");
        api("PUT", "/tenants/{tenantId}/integrations/{integrationKey}", "/tenants/" + TENANT + "/integrations/" + INTEGRATION,
                Map.of("tenantId", TENANT, "integrationKey", INTEGRATION), tenant);
    }

    /** A management API call through ApiFunction in this JVM. */
    private void api(String method, String route, String path, Map<String, String> pathParameters, JsonNode body) {
        ObjectNode event = read("api-create-run.json");
        event.put("routeKey", method + " " + route).put("rawPath", path).put("body", Json.write(body));
        ((ObjectNode) event.path("requestContext")).put("routeKey", method + " " + route);
        ((ObjectNode) event.path("requestContext").path("http")).put("method", method).put("path", path);
        ObjectNode parameters = event.putObject("pathParameters");
        pathParameters.forEach(parameters::put);
        expectStatus(invoke("ApiFunction", APIGatewayV2HTTPEvent.class, event.toString(), APIGatewayV2HTTPResponse.class), method + " " + path);
    }

    private static void expectStatus(Object answer, String what) {
        if (!(answer instanceof LocalFunction.Outcome.Returned(var value)) || !(value instanceof APIGatewayV2HTTPResponse response)
                || response.getStatusCode() / 100 != 2) {
            throw new IllegalStateException(what + " was refused: " + describe(answer));
        }
    }

    private String webhook() {
        ObjectNode event = read("webhook.json");
        ArrayNode body = Json.array();
        for (int i = 0; i < 2; i++) {
            body.addObject().put("externalId", "lead-" + UUID.randomUUID()).putObject("fields").put("name", "Ada");
        }
        byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
        long timestamp = System.currentTimeMillis() / 1000;
        event.put("body", new String(bytes, StandardCharsets.UTF_8));
        ObjectNode headers = ((ObjectNode) event.path("headers")).put("content-length", Integer.toString(bytes.length));
        StandardWebhooks.headers(List.of(WEBHOOK_SECRET), deliveryId(), timestamp, bytes).forEach(headers::put);
        return event.toString();
    }

    /** The tenant's schedule made due, so the tick fires a run. */
    private String scheduledTick() {
        var endpoints = servers.endpoints();
        try (var db = DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
             var statement = db.prepareStatement("update schedules set next_fire_at = now() where tenant_id = ?")) {
            statement.setString(1, TENANT);
            if (statement.executeUpdate() == 0) {
                throw new IllegalStateException("tenant " + TENANT + " has no schedule to make due");
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return read("scheduled.json").put("id", UUID.randomUUID().toString()).toString();
    }

    private String ingest() {
        ObjectNode event = read("sqs-ingest.json");
        ObjectNode record = (ObjectNode) event.path("Records").get(0);
        ObjectNode body = (ObjectNode) Json.parse(record.path("body").asText());
        body.put("externalId", "ext-" + UUID.randomUUID());
        String json = Json.write(body);
        record.put("messageId", UUID.randomUUID().toString()).put("body", json)
                .put("eventSourceARN", queueArn("IngestQueue"));
        // Signed by its producer with the tenant integration's webhook secret, as an ingest message is bound to its tenant.
        ObjectNode attributes = record.putObject("messageAttributes");
        StandardWebhooks.headers(List.of(WEBHOOK_SECRET), deliveryId(), System.currentTimeMillis() / 1000,
                json.getBytes(StandardCharsets.UTF_8)).forEach((name, value) -> stringAttribute(attributes, name, value, "String"));
        return event.toString();
    }

    private static String deliveryId() {
        return "msg_" + UUID.randomUUID().toString().replace("-", "");
    }

    /** A manual run through the management API: its RunJob lands on the runs-manual queue. */
    private void queueRun() {
        expectStatus(invoke("ApiFunction", APIGatewayV2HTTPEvent.class, read("api-create-run.json").toString(), APIGatewayV2HTTPResponse.class),
                "POST /runs");
    }

    /** A run fetched and fanned out by RunWorkerFunction in this JVM: its items land on items-manual. */
    private void fanOutRun() {
        queueRun();
        String runJob = sqsEvent("sqs-run-job.json", receive(queue("RunsManualQueue"), () -> {}), "RunsManualQueue", null);
        Object outcome = invoke("RunWorkerFunction", SQSEvent.class, runJob, SQSBatchResponse.class);
        if (!(outcome instanceof LocalFunction.Outcome.Returned)) {
            throw new IllegalStateException("RunWorkerFunction failed to fan out a run: " + describe(outcome));
        }
    }

    /**
     * One message of the queue, taken off it (the measured function has it now, as with an event
     * source mapping); when the queue is empty, {@code refill} puts messages there first.
     */
    private Message receive(String queueUrl, Runnable refill) {
        for (int attempt = 0; attempt < 2; attempt++) {
            int wait = attempt == 0 ? 0 : 2;
            List<Message> received = sqs.receiveMessage(b -> b.queueUrl(queueUrl).maxNumberOfMessages(1).waitTimeSeconds(wait)
                    .messageSystemAttributeNames(MessageSystemAttributeName.ALL).messageAttributeNames("All")).messages();
            if (!received.isEmpty()) {
                Message message = received.getFirst();
                sqs.deleteMessage(b -> b.queueUrl(queueUrl).receiptHandle(message.receiptHandle()));
                return message;
            }
            refill.run();
        }
        throw new IllegalStateException("nothing arrived on " + queueUrl);
    }

    /** The events/ file's record with the message in it, from the given queue; {@code error} as the DLQ's attribute. */
    private String sqsEvent(String file, Message message, String sourceQueue, String error) {
        ObjectNode event = read(file);
        ObjectNode record = (ObjectNode) event.path("Records").get(0);
        record.put("messageId", message.messageId()).put("receiptHandle", message.receiptHandle())
                .put("body", message.body()).put("md5OfBody", message.md5OfBody())
                .put("eventSourceARN", queueArn(sourceQueue));
        ObjectNode attributes = record.putObject("attributes");
        message.attributesAsStrings().forEach(attributes::put);
        attributes.put("ApproximateReceiveCount", "1");
        ObjectNode messageAttributes = record.putObject("messageAttributes");
        message.messageAttributes().forEach((name, value) -> stringAttribute(messageAttributes, name, value.stringValue(), value.dataType()));
        if (error != null) {
            stringAttribute(messageAttributes, "error", error, "String");
        }
        return event.toString();
    }

    private static void stringAttribute(ObjectNode attributes, String name, String value, String dataType) {
        ObjectNode attribute = attributes.putObject(name).put("stringValue", value).put("dataType", dataType);
        attribute.putArray("stringListValues");
        attribute.putArray("binaryListValues");
    }

    private Object invoke(String logicalId, Class<?> eventType, String json, Class<?> answerType) {
        LocalFunction function = inProcess.computeIfAbsent(logicalId, id -> {
            FunctionDefinition definition = functions.get(id);
            if (definition == null) {
                throw new IllegalStateException("the template has no " + id);
            }
            // Runner's functions take their composition root, as the local runtime builds them.
            return LocalFunction.load(definition, arn(definition), environment(definition), Clock.systemUTC(),
                    (type, environment) -> type.getConstructor(Runner.class).newInstance(Runner.fromEnvironment(environment)));
        });
        Object event = LambdaEventSerializers.serializerFor(eventType, ColdStartStack.class.getClassLoader()).fromJson(json);
        return function.invoke(event, answerType);
    }

    private static String describe(Object outcome) {
        return switch (outcome) {
            case LocalFunction.Outcome.Returned(var value) -> value instanceof APIGatewayV2HTTPResponse r
                    ? r.getStatusCode() + " " + r.getBody() : String.valueOf(value);
            case LocalFunction.Outcome.Failed failed -> failed.errorType() + ": " + failed.message();
            default -> String.valueOf(outcome);
        };
    }

    private String queue(String logicalId) {
        String url = queueUrls.get(logicalId);
        if (url == null) {
            throw new IllegalStateException("the template declares no queue " + logicalId);
        }
        return url;
    }

    private String queueArn(String logicalId) {
        String url = queue(logicalId);
        return "arn:aws:sqs:" + stack.region() + ":" + stack.accountId() + ":" + url.substring(url.lastIndexOf('/') + 1);
    }

    private ObjectNode read(String file) {
        try {
            return (ObjectNode) Json.parse(Files.readString(events.resolve(file)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + events.resolve(file), e);
        }
    }

    /** {@code {{resolve:…}}} in the template: placeholders, as every secret is replaced by a local one. */
    private static UnaryOperator<String> dynamicReferences() {
        return reference -> "local-" + reference.replaceAll("[^A-Za-z0-9]+", "-");
    }

    @Override
    public void close() {
        inProcess.values().forEach(LocalFunction::close);
        sqs.close();
        handlers.close();
        secrets.close();
        servers.close();
    }
}
