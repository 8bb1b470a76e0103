package dev.runner.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.app.Runner;
import dev.runner.config.RunnerConfig;
import dev.runner.config.SecretRole;
import dev.runner.cost.CostMeter;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.functions.telemetry.InvocationMetrics;
import dev.runner.functions.telemetry.LogLevels;
import dev.runner.local.demo.DemoHandlerService;
import dev.runner.local.demo.DemoIntegration;
import dev.runner.local.http.ApiServer;
import dev.runner.local.http.RouteTemplate;
import dev.runner.local.iam.LocalIam;
import dev.runner.local.iam.SqsIamInspector;
import dev.runner.local.lambda.InvocationMeter;
import dev.runner.local.lambda.LocalFunction;
import dev.runner.local.schedule.ScheduleTicker;
import dev.runner.local.secrets.LocalSecretsManager;
import dev.runner.local.sqs.QueuePoller;
import dev.runner.local.sqs.QueueProvisioner;
import dev.runner.local.template.EventSource;
import dev.runner.local.template.FunctionDefinition;
import dev.runner.local.template.Intrinsics;
import dev.runner.local.template.QueueDefinition;
import dev.runner.local.template.Template;
import dev.runner.local.template.TemplateException;
import dev.runner.store.Credentials;
import dev.runner.store.Database;
import dev.runner.store.DatabaseRole;
import io.lettuce.core.RedisClient;
import org.apache.logging.log4j.core.config.Configurator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * The whole suite on one machine: embedded Postgres, Redis and ElasticMQ, the queues and
 * functions of template.yaml wired as the template wires them (HTTP API routes, schedules, SQS
 * event source mappings), and a demo integration. {@code main} prints one {@code READY …} line
 * once it takes traffic, then the API key and the console's address; Ctrl-C stops everything,
 * embedded Postgres included.
 *
 * <p>IAM and secrets as in AWS: each function signs with credentials of its own and its SQS and
 * Secrets Manager requests are checked against the policies the template gives it ({@link LocalIam});
 * the secrets the template names are created in a local Secrets Manager ({@link LocalSecretsManager})
 * that functions read at run time, never from their environment; Postgres checks passwords, with the
 * functions logging in as their own role, whose password is the database secret's.
 */
public final class LocalRuntime implements AutoCloseable {

    private static final String QUIET_LIBRARIES = "warn,dev.runner=info";

    static {
        // Before the first line, so that even the first is written as configured.
        configureOutput();
    }

    private static final Logger LOG = LoggerFactory.getLogger(LocalRuntime.class);
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(10);
    /** The superuser, for operators and tools (the READY line's postgres URL). */
    private static final String DB_USER = "postgres";
    private static final String DB_PASSWORD = EmbeddedServers.SUPERUSER_PASSWORD;
    /** The schema's owner, Migrate's login (the database secret); each other function logs in as its own {@link DatabaseRole}. */
    public static final String FUNCTIONS_DB_USER = "runner";
    private static final String LOCAL_ACCESS_KEY = "local";
    /** Caller variables that choose the local secrets' values: they seed the secrets, never a function's environment. */
    private static final Set<String> SECRET_SEEDS = Set.of("RUNNER_API_KEY", "RUNNER_HANDLER_SIGNING_SECRET",
            "RUNNER_DATABASE_USER", "RUNNER_DATABASE_PASSWORD");

    private final LocalOptions options;
    private final Clock clock;
    private final String apiKey;
    private final String signingSecret;
    /** The key the items' callback URLs are signed with: one per runtime, as one secret per stack. */
    private final String callbackSecret = randomHex(32);
    private final String functionsDbPassword = randomHex(16);
    private final Map<DatabaseRole, String> rolePasswords = rolePasswords();
    private final Intrinsics.Stack stack = Intrinsics.Stack.local();
    private final LocalIam iam = new LocalIam(stack);
    private final List<LocalFunction> functions = new ArrayList<>();
    /** Composition roots by environment: functions configured alike share pools and clients, as one would expect of one JVM. */
    private final Map<Map<String, String>, Runner> roots = new LinkedHashMap<>();
    /** What every root's clients cost at the servers, for benchmarks. */
    private final CostMeter costs = new CostMeter();
    /** What each function's invocations cost: time and CPU. */
    private final InvocationMeter invocations;
    private final List<QueuePoller> pollers = new ArrayList<>();
    private final Map<String, String> queueUrls = new LinkedHashMap<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private EmbeddedServers servers;
    private ApiServer api;
    private LocalSecretsManager secrets;
    /** host:port of ElasticMQ while the IAM gate checks requests to it. */
    /** The embedded Redis' AUTH password, when the template names a Redis AUTH secret; null = none. */
    private String redisPassword;
    private SqsClient sqs;
    private ScheduleTicker ticker;
    private DemoHandlerService demo;
    /** Where the functions' EMF goes while this runtime runs (the READY line's metrics=). */
    private EmfCapture metrics;
    private String postgresUrl;
    private boolean servesConsole;
    private boolean stopped;
    /** Set by close() before it waits for a start in progress, which gives up at its next step. */
    private volatile boolean stopping;

    private LocalRuntime(LocalOptions options, Clock clock, InvocationMeter invocations) {
        this.options = options;
        this.clock = clock;
        this.invocations = invocations;
        this.apiKey = callerOr("RUNNER_API_KEY", () -> "rk_" + randomHex(16));
        this.signingSecret = callerOr("RUNNER_HANDLER_SIGNING_SECRET", () -> randomHex(32));
    }

    public static void main(String[] args) {
        LocalOptions options;
        try {
            options = LocalOptions.parse(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(64);
            return;
        }
        var runtime = new LocalRuntime(options, Clock.systemUTC(), new InvocationMeter(0));
        Runtime.getRuntime().addShutdownHook(new Thread(runtime::close, "local-runtime-stop"));
        // Ctrl-C during the start is held back until the start reaches a step where it can stop:
        // a JVM shutdown while embedded Postgres is starting would leave its postmaster behind
        // (its library cannot register its own stop hook once shutdown has begun).
        Map<Signal, SignalHandler> defaults = holdStopSignals(runtime);
        try {
            runtime.startAll();
        } catch (RuntimeException e) {
            // Read before close(), which sets it: only a stop asked for during the start is a quiet exit.
            boolean askedToStop = runtime.stopping;
            runtime.close();
            if (askedToStop && !(e instanceof EmbeddedServers.PortTakenException)) {
                System.exit(130);
            }
            if (e instanceof EmbeddedServers.PortTakenException) {
                System.err.println(e.getMessage());
                System.exit(2);
            }
            if (e instanceof TemplateException || e instanceof LocalFunction.FunctionLoadException
                    || e instanceof IllegalArgumentException) {
                System.err.println("cannot start: " + e.getMessage());
            } else {
                System.err.println("cannot start: " + e);
                e.printStackTrace();
            }
            System.exit(1);
        }
        defaults.forEach(Signal::handle);
        if (runtime.stopping) {
            System.exit(130);
        }
        System.out.println(runtime.readyLine());
        System.out.println("RUNNER_API_KEY=" + runtime.apiKey());
        runtime.consoleUrl().ifPresent(console -> System.out.println("CONSOLE=" + console));
        System.out.flush();
        runtime.awaitClose();
    }

    /** Starts everything; the caller closes it. A failed start leaves nothing running. */
    public static LocalRuntime start(LocalOptions options) {
        return start(options, new InvocationMeter(0));
    }

    /** Starts everything, measuring invocations with {@code invocations} (benchmarks sample CPU with it). */
    public static LocalRuntime start(LocalOptions options, InvocationMeter invocations) {
        var runtime = new LocalRuntime(options, Clock.systemUTC(), invocations);
        try {
            runtime.startAll();
            return runtime;
        } catch (RuntimeException e) {
            runtime.close();
            throw e;
        }
    }

    /** {@code READY api=… sqs=… redis=… postgres=… secretsmanager=…}: what a client needs, postgres as a usable JDBC URL. */
    public String readyLine() {
        return "READY api=" + apiUrl() + " sqs=" + servers.endpoints().sqsEndpoint() + " redis=" + redisUrl()
                + " postgres=" + postgresUrl + "&user=" + DB_USER + "&password=" + DB_PASSWORD
                + " secretsmanager=" + secretsEndpoint() + " metrics=" + metricsPath();
    }

    /** The file the functions' CloudWatch EMF lines go to, one JSON document a line, as Lambda's log stream would hold them. */
    public Path metricsPath() {
        return metrics.file();
    }

    /** RUNNER_METRICS_FILE, else a new file in the temporary directory. */
    private Path metricsFile() {
        String named = options.environment().get("RUNNER_METRICS_FILE");
        if (named != null && !named.isBlank()) {
            return Path.of(named);
        }
        try {
            return Files.createTempFile("runner-metrics-", ".emf.jsonl");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("no temporary file for the metrics", e);
        }
    }

    /** The local Secrets Manager: {@code aws secretsmanager … --endpoint-url} this. */
    public URI secretsEndpoint() {
        return secrets.endpoint();
    }

    /** The secrets the functions read; tests rotate them here. */
    public LocalSecretsManager secrets() {
        return secrets;
    }

    public URI apiUrl() {
        return URI.create("http://127.0.0.1:" + api.port());
    }

    /** The operator console's address, when the template routes {@code GET /console} (the project's does). */
    public Optional<URI> consoleUrl() {
        return servesConsole ? Optional.of(apiUrl().resolve("/console")) : Optional.empty();
    }

    public String apiKey() {
        return apiKey;
    }

    /** For operators and tools: Postgres as its superuser, Redis with its AUTH password if it has one. */
    /** The SQS endpoint's front end, where every request over HTTP arrives (the bench counts them there). */
    public dev.runner.embedded.sqs.SqsFrontEnd sqsFrontEnd() {
        return servers.sqsFrontEnd().orElseThrow();
    }

    public EmbeddedServers.Endpoints endpoints() {
        return new EmbeddedServers.Endpoints(postgresUrl, DB_USER, DB_PASSWORD, redisUrl(), servers.endpoints().sqsEndpoint());
    }

    private String redisUrl() {
        String url = servers.endpoints().redisUrl();
        return redisPassword == null ? url : url.replace("redis://", "redis://:" + redisPassword + "@");
    }

    /** Queue URL by the template's logical id. */
    public Map<String, String> queueUrls() {
        return Map.copyOf(queueUrls);
    }

    /**
     * Fault injection (the fault run): embedded Redis goes away for {@code down} and comes back on
     * its port, empty. The functions keep running and must ride it out.
     */
    public void restartRedis(Duration down) {
        servers.restartRedis(down);
    }

    /** Fault injection (the fault run): embedded Postgres goes away for {@code down} and comes back on its port with its data. */
    public void restartPostgres(Duration down) {
        servers.restartPostgres(down);
    }

    /** The demo handler service, or null when started without the demo. */
    public DemoHandlerService demo() {
        return demo;
    }

    private synchronized void startAll() {
        Instant began = clock.instant();
        metrics = EmfCapture.install(metricsFile());
        var template = Template.read(options.template(), options.parameterOverrides(), this::dynamicReference);
        template.warnings().forEach(w -> LOG.warn("template: {}", w));
        List<QueueDefinition> queues = template.queues();
        api = ApiServer.bind(options.apiPort(), clock, invocations.callerThreads("api"));
        secrets = LocalSecretsManager.bind(options.secretsPort(), iam, clock);
        checkNotStopping();
        startServers();
        checkNotStopping();
        requirePasswords();
        migrate();
        Map<String, String> urlsByName = createQueues(template, queues);
        checkNotStopping();
        secrets.start();
        if (options.demo()) {
            demo = DemoHandlerService.start();
        }
        ticker = new ScheduleTicker(clock, options.scheduleTick(), stack.region(), stack.accountId(),
                invocations.callerThreads("schedule"));
        // On a thread of the functions' group: what their constructors start (pools, clients) is theirs.
        List<ApiServer.Route> routes = invocations.inFunctionGroup(() -> wire(template.functions(), urlsByName));
        checkNotStopping();
        invocations.inFunctionGroup(() -> {
            giveDatabaseLogins();
            return null;
        });
        api.start(routes);
        servesConsole = routes.stream()
                .anyMatch(route -> route.template().method().equalsIgnoreCase("GET") && route.template().path().equals("/console"));
        pollers.forEach(QueuePoller::start);
        if (demo != null) {
            installDemo();
        }
        LOG.info("{} functions, {} queues, {} routes, {} queue pollers ready in {} ms", functions.size(), queues.size(),
                routes.size(), pollers.size(), Duration.between(began, clock.instant()).toMillis());
    }

    private void startServers() {
        servers = EmbeddedServers.start(new EmbeddedServers.Ports(options.postgresPort(), options.redisPort(), options.sqsPort()), true,
                options.postgresDurable());
        int postgresPort = URI.create(servers.endpoints().jdbcUrl().substring("jdbc:".length())).getPort();
        postgresUrl = "jdbc:postgresql://127.0.0.1:" + postgresPort + "/postgres?" + servers.postgresTls();
        useLocalAwsDefaults();
        // The functions speak SQS over HTTP: their requests are held to their roles where they arrive.
        servers.sqsFrontEnd().orElseThrow(() -> new IllegalStateException("the local runtime's SQS runs behind its front end"))
                .inspect(new SqsIamInspector(iam));
        sqs = SqsClient.builder()
                .endpointOverride(URI.create(servers.endpoints().sqsEndpoint()))
                .region(Region.of(stack.region()))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(LOCAL_ACCESS_KEY, LOCAL_ACCESS_KEY)))
                .httpClient(UrlConnectionHttpClient.builder().socketTimeout(Duration.ofSeconds(30)).build())
                .build();
    }

    /** Creates the queues and tells the template their URLs; returns the URLs by queue name. */
    private Map<String, String> createQueues(Template template, List<QueueDefinition> queues) {
        queueUrls.putAll(new QueueProvisioner(sqs).create(queues));
        queueUrls.forEach(template::queueCreated);
        Map<String, String> urlsByName = new LinkedHashMap<>();
        queues.forEach(q -> urlsByName.put(q.name(), queueUrls.get(q.logicalId())));
        return urlsByName;
    }

    /** Loads every function and connects its event sources; returns the HTTP routes to serve. */
    private List<ApiServer.Route> wire(List<FunctionDefinition> definitions, Map<String, String> queueUrlsByName) {
        List<ApiServer.Route> routes = new ArrayList<>();
        for (FunctionDefinition definition : definitions) {
            Map<String, String> environment = environment(definition, iam.register(definition));
            createSecrets(environment);
            LocalFunction function = LocalFunction.load(definition, definition.arn(stack), environment, clock,
                    this::newFunctionInstance, invocations);
            functions.add(function);
            for (EventSource source : definition.events()) {
                switch (source) {
                    case EventSource.HttpRoute route -> {
                        function.requireInput(APIGatewayV2HTTPEvent.class, source.name());
                        routes.add(new ApiServer.Route(RouteTemplate.of(route.method(), route.path()), function));
                    }
                    case EventSource.Queue queue -> {
                        function.requireInput(SQSEvent.class, source.name());
                        String url = queueUrlsByName.get(queue.queueName());
                        if (url == null) {
                            throw new TemplateException(source.name() + ": queue " + queue.queueName() + " is not declared in the template");
                        }
                        pollers.add(new QueuePoller(servers.queues(), queue, function, stack.region(), clock, invocations));
                    }
                    case EventSource.Schedule schedule -> {
                        function.requireInput(ScheduledEvent.class, source.name());
                        ticker.add(schedule, function);
                    }
                }
                LOG.info("wired {} -> {}", describe(source), definition.logicalId());
            }
        }
        return routes;
    }

    /**
     * Runner's functions take their composition root (one per environment, shared); any other
     * handler class is built from its environment map, as {@link LocalFunction} does by default.
     */
    private Object newFunctionInstance(Class<?> type, Map<String, String> environment) throws ReflectiveOperationException {
        try {
            Constructor<?> byRoot = type.getConstructor(Runner.class);
            return byRoot.newInstance(root(environment));
        } catch (NoSuchMethodException e) {
            return LocalFunction.Instantiator.BY_ENVIRONMENT.newInstance(type, environment);
        }
    }

    private Runner root(Map<String, String> environment) {
        synchronized (roots) {
            return roots.computeIfAbsent(Map.copyOf(environment), env -> new Runner(RunnerConfig.from(env), clock, costs,
                    InvocationMetrics.INSTANCE));
        }
    }

    /** What the functions' clients have cost at the servers so far. */
    public CostMeter costs() {
        return costs;
    }

    /** The SQS requests the event source mappings have made so far (in AWS, Lambda's pollers; billed to the account). */
    public QueuePoller.Requests eventSourceRequests() {
        return pollers.stream().map(QueuePoller::requests).reduce(new QueuePoller.Requests(0, 0, 0, 0), QueuePoller.Requests::plus);
    }

    /** What each function's invocations have cost so far: count, time, CPU. */
    public InvocationMeter.Snapshot invocations() {
        return invocations.snapshot();
    }

    /** Through the management API, as a user would; a refusal is reported and the runtime still starts. */
    private void installDemo() {
        try {
            new DemoIntegration(apiUrl(), apiKey).install(demo);
            LOG.info("demo integration {} for tenant {} (webhook secret {}) served at {}", DemoIntegration.INTEGRATION_KEY,
                    DemoIntegration.TENANT_ID, DemoIntegration.WEBHOOK_SECRET,
                    demo.url(DemoIntegration.INTEGRATION_KEY, DemoIntegration.HANDLER_KEY));
        } catch (IllegalStateException e) {
            LOG.warn("demo integration not installed: {}", e.getMessage());
        }
    }

    /**
     * What a function sees: the template's variables, then the caller's {@code RUNNER_*} variables
     * (except those that choose secrets' values), then the endpoints of the embedded servers and
     * the function's own AWS credentials. No secret value: functions read their secrets at run time.
     */
    private Map<String, String> environment(FunctionDefinition definition, Optional<LocalIam.Identity> identity) {
        Map<String, String> environment = new LinkedHashMap<>(definition.environment());
        options.environment().forEach((name, value) -> {
            if (name.startsWith("RUNNER_") && !SECRET_SEEDS.contains(name)) {
                environment.put(name, value);
            }
        });
        environment.put("RUNNER_DATABASE_URL", postgresUrl);
        environment.put("RUNNER_REDIS_URL", servers.endpoints().redisUrl());
        environment.put("RUNNER_REDIS_MODE", "standalone");
        environment.put("RUNNER_SQS_ENDPOINT", servers.endpoints().sqsEndpoint());
        environment.put("RUNNER_SECRETS_ENDPOINT", secrets.endpoint().toString());
        // The demo's and a developer's handlers listen on this machine: loopback only, unless the caller names networks.
        environment.put("RUNNER_HANDLER_ALLOWED_NETWORKS", callerOr("RUNNER_HANDLER_ALLOWED_NETWORKS", () -> "127.0.0.0/8,::1/128"));
        if (environment.containsKey("RUNNER_CALLBACK_BASE_URL")) {
            // Handlers call back to this runtime's API, where the template's HTTP API address would be.
            environment.put("RUNNER_CALLBACK_BASE_URL", apiUrl().toString());
        }
        environment.put("AWS_REGION", stack.region());
        environment.put("AWS_DEFAULT_REGION", stack.region());
        environment.put("AWS_ACCESS_KEY_ID", identity.map(LocalIam.Identity::accessKeyId).orElse(LOCAL_ACCESS_KEY));
        environment.put("AWS_SECRET_ACCESS_KEY", LOCAL_ACCESS_KEY);
        return environment;
    }

    /** Creates, with local values, the secrets a function's environment names (Runner's {@code RUNNER_*_SECRET} variables). */
    private void createSecrets(Map<String, String> environment) {
        for (SecretRole role : SecretRole.values()) {
            String name = environment.get(role.variable());
            if (name == null || name.isBlank() || secrets.find(name).isPresent()) {
                continue;
            }
            if (role == SecretRole.DATABASE_LOGINS) {
                for (DatabaseRole login : DatabaseRole.values()) {
                    secrets.createIfAbsent(login.secretName(name), databaseLogin(login.roleName(), rolePasswords.get(login)));
                }
                LOG.info("secrets {}* created for the functions' database logins", name);
                continue;
            }
            String value = switch (role) {
                case DATABASE -> databaseLogin(name);
                case DATABASE_LOGINS -> throw new AssertionError("created above");
                case API_KEY -> apiKey;
                case HANDLER_SIGNING_KEY -> signingSecret;
                case CALLBACK_KEY -> callbackSecret;
                case REDIS_AUTH -> requireRedisPassword();
            };
            secrets.createIfAbsent(name, value);
            LOG.info("secret {} created for {}", name, role);
        }
    }

    /** The login a database secret's name stands for: a function's role when the name ends with it (as the template names them), else the owner. */
    private String databaseLogin(String secretName) {
        for (DatabaseRole role : DatabaseRole.values()) {
            if (secretName.endsWith(role.roleName())) {
                return databaseLogin(role.roleName(), rolePasswords.get(role));
            }
        }
        return databaseLogin(FUNCTIONS_DB_USER, functionsDbPassword);
    }

    private static String databaseLogin(String username, String password) {
        return LocalSecretsManager.json(Map.of("username", username, "password", password));
    }

    private static Map<DatabaseRole, String> rolePasswords() {
        Map<DatabaseRole, String> passwords = new EnumMap<>(DatabaseRole.class);
        for (DatabaseRole role : DatabaseRole.values()) {
            passwords.put(role, randomHex(16));
        }
        return Map.copyOf(passwords);
    }

    /** The template names a Redis AUTH secret: the embedded Redis then requires that password, as ElastiCache would. */
    private String requireRedisPassword() {
        if (redisPassword == null) {
            String password = randomHex(16);
            RedisClient client = RedisClient.create(servers.endpoints().redisUrl());
            try (var connection = client.connect()) {
                connection.sync().configSet("requirepass", password);
            } finally {
                client.shutdown();
            }
            redisPassword = password;
        }
        return redisPassword;
    }

    /** {@code {{resolve:service:reference}}} → a local value: secrets the runtime owns, by what they name. */
    private String dynamicReference(String reference) {
        String name = reference.toLowerCase(Locale.ROOT);
        if (name.contains("password")) {
            return functionsDbPassword;
        }
        if (name.contains("username")) {
            return FUNCTIONS_DB_USER;
        }
        if (name.contains("signing")) {
            return signingSecret;
        }
        if (name.contains("api")) {
            return apiKey;
        }
        return "local-" + reference.replaceAll("[^A-Za-z0-9]+", "-");
    }

    /**
     * Embedded Postgres trusts every local login; AWS's does not. The superuser gets its password,
     * the functions a role of their own, and TCP logins must then prove their password (SCRAM), so
     * a stale database secret fails here as it would against RDS.
     */
    private void requirePasswords() {
        try (Connection admin = DriverManager.getConnection(postgresUrl, DB_USER, DB_PASSWORD);
             Statement statement = admin.createStatement()) {
            // Role names and the hex password are the runtime's own constants: DDL takes no bind parameters.
            statement.execute("ALTER ROLE " + DB_USER + " PASSWORD '" + DB_PASSWORD + "'");
            // The owner creates the functions' roles in its migrations, as the RDS master user may, and owns the
            // schema as RDS's master user does (pg_database_owner): its grants and revokes on it take effect, and
            // Postgres has nothing to warn about.
            statement.execute("CREATE ROLE " + FUNCTIONS_DB_USER + " LOGIN CREATEROLE PASSWORD '" + functionsDbPassword + "'");
            statement.execute("ALTER SCHEMA public OWNER TO " + FUNCTIONS_DB_USER);
            String hbaFile;
            try (ResultSet row = statement.executeQuery("SHOW hba_file")) {
                row.next();
                hbaFile = row.getString(1);
            }
            Files.writeString(Path.of(hbaFile), """
                    local all all trust
                    hostssl all all 127.0.0.1/32 scram-sha-256
                    hostssl all all ::1/128 scram-sha-256
                    """);
            statement.execute("SELECT pg_reload_conf()");
        } catch (SQLException | IOException e) {
            throw new IllegalStateException("could not make embedded Postgres check passwords: " + e.getMessage(), e);
        }
    }

    /** The schema, as the owner, before any function loads: a template without Runner's Migrate function gets it too. */
    private void migrate() {
        Database.migrate(postgresUrl, owner());
    }

    /**
     * What the Migration custom resource then does: the template's Migrate function (the one
     * that reads the logins' secrets), invoked as CloudFormation would, gives each function's role
     * its login from its secret, read under Migrate's own role. Without it, the runtime does so.
     */
    private void giveDatabaseLogins() {
        Optional<LocalFunction> migrate = functions.stream()
                .filter(function -> function.environment().containsKey(SecretRole.DATABASE_LOGINS.variable()))
                .findFirst();
        if (migrate.isEmpty()) {
            Database.enableLogins(postgresUrl, owner(), rolePasswords::get);
            return;
        }
        LocalFunction.Outcome outcome = migrate.get().invoke(Map.of("RequestType", "Create"), Map.class);
        if (!(outcome instanceof LocalFunction.Outcome.Returned(Map<?, ?> answer)) || !"SUCCESS".equals(answer.get("Status"))) {
            throw new IllegalStateException(migrate.get().logicalId() + " did not give the functions their database logins: " + outcome);
        }
    }

    private Credentials owner() {
        return Credentials.fixed(FUNCTIONS_DB_USER, functionsDbPassword);
    }

    /** Functions build their AWS clients with the default chains; point those at local, dummy values. */
    private static void useLocalAwsDefaults() {
        setIfAbsent("aws.accessKeyId", LOCAL_ACCESS_KEY);
        setIfAbsent("aws.secretAccessKey", LOCAL_ACCESS_KEY);
        setIfAbsent("aws.region", Intrinsics.Stack.local().region());
        setIfAbsent("aws.disableEc2Metadata", "true");
        // The JDK keeps 5 idle HTTP connections per host by default, and here every function's SQS
        // client shares that cache (in AWS each execution environment has its own): a fan-out's
        // 50 concurrent sends would open and close connections to the local endpoint.
        setIfAbsent("http.maxConnections", "100");
    }

    public void awaitClose() {
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops schedules and pollers (letting running batches finish), the API, then the servers. */
    @Override
    public void close() {
        stopping = true;
        synchronized (this) {
            closeOnce();
        }
    }

    private void closeOnce() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            closeQuietly(ticker);
            pollers.forEach(QueuePoller::signalStop);
            Instant deadline = clock.instant().plus(DRAIN_GRACE);
            pollers.forEach(p -> p.awaitIdle(Duration.between(clock.instant(), deadline)));
            closeQuietly(api);
            functions.forEach(LocalRuntime::closeQuietly);
            closeCompositionRoots();
            closeQuietly(secrets);
            closeQuietly(demo);
            closeQuietly(sqs);
            closeQuietly(servers);
            closeQuietly(metrics);
        } finally {
            closed.countDown();
        }
    }

    /** Until the start is done, INT and TERM only ask it to stop; returns the handlers to restore. */
    private static Map<Signal, SignalHandler> holdStopSignals(LocalRuntime runtime) {
        Map<Signal, SignalHandler> defaults = new LinkedHashMap<>();
        for (String name : List.of("INT", "TERM")) {
            try {
                Signal signal = new Signal(name);
                defaults.put(signal, Signal.handle(signal, received -> runtime.stopping = true));
            } catch (IllegalArgumentException e) {
                // A platform without this signal: nothing to hold back.
            }
        }
        return defaults;
    }

    /** The roots die with the servers they point at; in-process users (tests, benchmarks) may start another runtime. */
    private void closeCompositionRoots() {
        synchronized (roots) {
            roots.values().forEach(LocalRuntime::closeQuietly);
            roots.clear();
        }
    }

    private void checkNotStopping() {
        if (stopping) {
            throw new IllegalStateException("stopped while starting");
        }
    }

    private String callerOr(String name, java.util.function.Supplier<String> generated) {
        String value = options.environment().get(name);
        return value == null || value.isBlank() ? generated.get() : value;
    }

    private static String describe(EventSource source) {
        return switch (source) {
            case EventSource.HttpRoute route -> "route " + route.routeKey();
            case EventSource.Queue queue -> "queue " + queue.queueName() + " (batch " + queue.batchSize() + ", window "
                    + queue.batchingWindow().toSeconds() + " s, concurrency " + queue.maximumConcurrency()
                    + (queue.reportBatchItemFailures() ? ", partial batch responses" : "") + ")";
            case EventSource.Schedule schedule -> "schedule " + schedule.expression();
        };
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.warn("did not stop cleanly: {}", e.toString());
        }
    }

    private static void setIfAbsent(String property, String value) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, value);
        }
    }

    /**
     * The functions' lines are JSON here too, as in Lambda; the runtime's own lines and those of the
     * servers it embeds stay plain text for people; all of them on stderr, as before. Library start-up chatter (initdb, Pekko, Flyway)
     * stays out of the way unless RUNNER_LOG_LEVEL (or -Drunner.log.level) asks for it. Metrics
     * are Powertools' EMF, as in Lambda, sent to the metrics file, with a short line among the logs ({@link LocalMetrics}).
     */
    private static void configureOutput() {
        // log4j2-local.xml: which loggers are plain, and every line on stderr (stdout is for the READY line and the API key, which scripts read).
        try {
            Configurator.reconfigure(LocalRuntime.class.getResource("/log4j2-local.xml").toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        String spec = System.getProperty(LogLevels.LEVEL_PROPERTY, System.getenv(LogLevels.LEVEL_VARIABLE));
        try {
            LogLevels.apply(spec == null || spec.isBlank() ? QUIET_LIBRARIES : spec);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "; logging as " + QUIET_LIBRARIES);
            LogLevels.apply(QUIET_LIBRARIES);
        }
        InvocationMetrics.publishTo(new LocalMetrics());
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        new SecureRandom().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
