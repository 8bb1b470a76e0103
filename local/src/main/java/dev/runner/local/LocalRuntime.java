package dev.runner.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.app.Runner;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostMeter;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.local.demo.DemoHandlerService;
import dev.runner.local.demo.DemoIntegration;
import dev.runner.local.http.ApiServer;
import dev.runner.local.http.RouteTemplate;
import dev.runner.local.lambda.InvocationMeter;
import dev.runner.local.lambda.LocalFunction;
import dev.runner.local.schedule.ScheduleTicker;
import dev.runner.local.sqs.QueuePoller;
import dev.runner.local.sqs.QueueProvisioner;
import dev.runner.local.template.EventSource;
import dev.runner.local.template.FunctionDefinition;
import dev.runner.local.template.Intrinsics;
import dev.runner.local.template.QueueDefinition;
import dev.runner.local.template.Template;
import dev.runner.local.template.TemplateException;
import dev.runner.store.Database;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.lang.reflect.Constructor;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The whole suite on one machine: embedded Postgres, Redis and ElasticMQ, the queues and
 * functions of template.yaml wired as the template wires them (HTTP API routes, schedules, SQS
 * event source mappings), and a demo integration. {@code main} prints one {@code READY …} line
 * once it takes traffic, then the API key; Ctrl-C stops everything, embedded Postgres included.
 */
public final class LocalRuntime implements AutoCloseable {

    static {
        // Before the first logger exists: slf4j-simple reads its levels once.
        quietLibraries();
    }

    private static final Logger LOG = LoggerFactory.getLogger(LocalRuntime.class);
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(10);
    private static final String DB_USER = "postgres";
    private static final String DB_PASSWORD = "postgres";
    private static final String LOCAL_ACCESS_KEY = "local";

    private final LocalOptions options;
    private final Clock clock;
    private final String apiKey;
    private final String signingSecret;
    private final Intrinsics.Stack stack = Intrinsics.Stack.local();
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
    private SqsClient sqs;
    private ScheduleTicker ticker;
    private DemoHandlerService demo;
    private String postgresUrl;
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
            runtime.close();
            if (runtime.stopping && !(e instanceof EmbeddedServers.PortTakenException)) {
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

    /** {@code READY api=… sqs=… redis=… postgres=…}: what a client needs, postgres as a usable JDBC URL. */
    public String readyLine() {
        return "READY api=" + apiUrl() + " sqs=" + servers.endpoints().sqsEndpoint() + " redis=" + servers.endpoints().redisUrl()
                + " postgres=" + postgresUrl + "?user=" + DB_USER + "&password=" + DB_PASSWORD;
    }

    public URI apiUrl() {
        return URI.create("http://127.0.0.1:" + api.port());
    }

    public String apiKey() {
        return apiKey;
    }

    public EmbeddedServers.Endpoints endpoints() {
        return new EmbeddedServers.Endpoints(postgresUrl, DB_USER, DB_PASSWORD,
                servers.endpoints().redisUrl(), servers.endpoints().sqsEndpoint());
    }

    /** Queue URL by the template's logical id. */
    public Map<String, String> queueUrls() {
        return Map.copyOf(queueUrls);
    }

    /** The demo handler service, or null when started without the demo. */
    public DemoHandlerService demo() {
        return demo;
    }

    private synchronized void startAll() {
        Instant began = clock.instant();
        var template = Template.read(options.template(), options.parameterOverrides(), this::dynamicReference);
        template.warnings().forEach(w -> LOG.warn("template: {}", w));
        List<QueueDefinition> queues = template.queues();
        api = ApiServer.bind(options.apiPort(), clock, invocations.callerThreads("api"));
        checkNotStopping();
        startServers();
        checkNotStopping();
        migrate();
        Map<String, String> urlsByName = createQueues(template, queues);
        checkNotStopping();
        if (options.demo()) {
            demo = DemoHandlerService.start();
        }
        ticker = new ScheduleTicker(clock, options.scheduleTick(), stack.region(), stack.accountId(),
                invocations.callerThreads("schedule"));
        // On a thread of the functions' group: what their constructors start (pools, clients) is theirs.
        List<ApiServer.Route> routes = invocations.inFunctionGroup(() -> wire(template.functions(), urlsByName));
        checkNotStopping();
        api.start(routes);
        pollers.forEach(QueuePoller::start);
        if (demo != null) {
            installDemo();
        }
        LOG.info("{} functions, {} queues, {} routes, {} queue pollers ready in {} ms", functions.size(), queues.size(),
                routes.size(), pollers.size(), Duration.between(began, clock.instant()).toMillis());
    }

    private void startServers() {
        servers = EmbeddedServers.start(new EmbeddedServers.Ports(options.postgresPort(), options.redisPort(), options.sqsPort()), true);
        int postgresPort = URI.create(servers.endpoints().jdbcUrl().substring("jdbc:".length())).getPort();
        postgresUrl = "jdbc:postgresql://127.0.0.1:" + postgresPort + "/postgres";
        useLocalAwsDefaults();
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
            LocalFunction function = LocalFunction.load(definition, definition.arn(stack), environment(definition), clock,
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
            return roots.computeIfAbsent(Map.copyOf(environment), env -> new Runner(RunnerConfig.from(env), clock, costs));
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
     * What a function sees: the template's variables, then the caller's {@code RUNNER_*} variables,
     * then the endpoints of the embedded servers and the local secrets.
     */
    private Map<String, String> environment(FunctionDefinition definition) {
        Map<String, String> environment = new LinkedHashMap<>(definition.environment());
        options.environment().forEach((name, value) -> {
            if (name.startsWith("RUNNER_")) {
                environment.put(name, value);
            }
        });
        environment.put("RUNNER_DATABASE_URL", postgresUrl);
        environment.put("RUNNER_DATABASE_USER", DB_USER);
        environment.put("RUNNER_DATABASE_PASSWORD", DB_PASSWORD);
        environment.put("RUNNER_REDIS_URL", servers.endpoints().redisUrl());
        environment.put("RUNNER_SQS_ENDPOINT", servers.endpoints().sqsEndpoint());
        environment.put("RUNNER_API_KEY", apiKey);
        environment.put("RUNNER_HANDLER_SIGNING_SECRET", signingSecret);
        // The demo's and a developer's handlers listen on this machine: loopback only, unless the caller names networks.
        environment.put("RUNNER_HANDLER_ALLOWED_NETWORKS", callerOr("RUNNER_HANDLER_ALLOWED_NETWORKS", () -> "127.0.0.0/8,::1/128"));
        environment.put("AWS_REGION", stack.region());
        environment.put("AWS_DEFAULT_REGION", stack.region());
        environment.put("AWS_ACCESS_KEY_ID", LOCAL_ACCESS_KEY);
        environment.put("AWS_SECRET_ACCESS_KEY", LOCAL_ACCESS_KEY);
        return environment;
    }

    /** {@code {{resolve:service:reference}}} → a local value: secrets the runtime owns, by what they name. */
    private String dynamicReference(String reference) {
        String name = reference.toLowerCase(Locale.ROOT);
        if (name.contains("password")) {
            return DB_PASSWORD;
        }
        if (name.contains("username")) {
            return DB_USER;
        }
        if (name.contains("signing")) {
            return signingSecret;
        }
        if (name.contains("api")) {
            return apiKey;
        }
        return "local-" + reference.replaceAll("[^A-Za-z0-9]+", "-");
    }

    /** What the Migration custom resource does on deploy, done directly: there is no CloudFormation here. */
    private void migrate() {
        Database.migrate(new RunnerConfig.Database(postgresUrl, DB_USER, DB_PASSWORD));
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
            closeQuietly(demo);
            closeQuietly(sqs);
            closeQuietly(servers);
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

    /** Library start-up chatter (initdb, Pekko, Flyway) stays out of the way; the runtime's own lines remain. */
    private static void quietLibraries() {
        setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setIfAbsent("org.slf4j.simpleLogger.log.dev.runner", "info");
        setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
        setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        new SecureRandom().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
