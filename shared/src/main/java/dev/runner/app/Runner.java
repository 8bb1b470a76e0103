package dev.runner.app;

import com.zaxxer.hikari.HikariDataSource;
import dev.runner.api.IamPrincipals;
import dev.runner.api.ManagementApi;
import dev.runner.apikey.ApiKeyStore;
import dev.runner.backlog.BacklogHorizon;
import dev.runner.backlog.BacklogRelease;
import dev.runner.backlog.BacklogStore;
import dev.runner.bulk.BulkActionStore;
import dev.runner.cache.TypesCache;
import dev.runner.callback.CallbackStore;
import dev.runner.callback.CallbackUrls;
import dev.runner.callback.HeldLeases;
import dev.runner.callback.PendingWaits;
import dev.runner.config.RunnerConfig;
import dev.runner.config.SecretRole;
import dev.runner.cost.CostTracker;
import dev.runner.delivery.DeliveryStore;
import dev.runner.delivery.IngestProducers;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.guard.Guard;
import dev.runner.guard.GuardReadings;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.HandlerSigning;
import dev.runner.handler.SigningKeyStore;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.integration.IntegrationQueries;
import dev.runner.integration.IntegrationStore;
import dev.runner.integration.Integrations;
import dev.runner.intake.EventIntake;
import dev.runner.intake.IngestBinding;
import dev.runner.intake.IngestService;
import dev.runner.item.CancelStore;
import dev.runner.item.ItemQueries;
import dev.runner.item.RedriveStore;
import dev.runner.item.ItemStore;
import dev.runner.metrics.Metrics;
import dev.runner.pause.PauseStore;
import dev.runner.ordering.RecordOrder;
import dev.runner.outbox.OutboxStore;
import dev.runner.packing.ItemPacker;
import dev.runner.pipeline.DeadLetterService;
import dev.runner.pipeline.DeliveredRuns;
import dev.runner.pipeline.FetchStep;
import dev.runner.pipeline.ItemDispatcher;
import dev.runner.pipeline.AdmissionStep;
import dev.runner.pipeline.CallStep;
import dev.runner.pipeline.CallbackCompletion;
import dev.runner.pipeline.CallTimes;
import dev.runner.pipeline.ClaimStep;
import dev.runner.pipeline.ItemWorker;
import dev.runner.pipeline.SettleStep;
import dev.runner.pipeline.BulkActions;
import dev.runner.pipeline.BulkPages;
import dev.runner.pipeline.PauseService;
import dev.runner.pipeline.LostWorkSweep;
import dev.runner.pipeline.RedriveService;
import dev.runner.pipeline.RetentionSweep;
import dev.runner.pipeline.RunDispatcher;
import dev.runner.pipeline.RunService;
import dev.runner.pipeline.RunWorker;
import dev.runner.pipeline.Scheduler;
import dev.runner.pipeline.Sweeps;
import dev.runner.queue.QueueClient;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.retention.RetentionStore;
import dev.runner.run.RunQueries;
import dev.runner.run.RunRequestStore;
import dev.runner.run.RunStore;
import dev.runner.schedule.ScheduleStore;
import dev.runner.secrets.DatabaseLogin;
import dev.runner.secrets.Secret;
import dev.runner.secrets.Secrets;
import dev.runner.secrets.SecretsManagerSource;
import dev.runner.store.Credentials;
import dev.runner.store.Database;
import dev.runner.webhook.CallbackEndpoint;
import dev.runner.webhook.WebhookService;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The composition root, by hand: every client and service is built on first use and kept, so a
 * function builds only what its entry point reaches (the DLQ consumer never builds an HTTP client
 * or a Redis connection) and a cold start pays for nothing else. One root per execution
 * environment: Lambda builds it in the function's no-arg constructor; the local runtime, tests and
 * benchmarks build their own and pass it in.
 *
 * <p>A function binds its {@link Grants} to the root ({@link #serve}): from then on the root's queue
 * client refuses every queue, and the root every secret, the grants do not name, as IAM would in
 * AWS. Secrets (database login, API key, handler signing key, Redis AUTH token) are read from
 * Secrets Manager when first needed, never from the environment; a value given in the environment
 * (tests, development) is used as is.
 */
public final class Runner implements AutoCloseable {

    /** The in-process layer in front of the Redis types cache (and of tenant integrations): short, so a change is seen soon everywhere. */
    private static final Duration LOCAL_TYPES_TTL = Duration.ofSeconds(5);

    private final RunnerConfig config;
    private final Clock clock;
    private final CostTracker costs;
    private final Metrics metrics;
    private final List<Part<?>> parts = new ArrayList<>();
    private final SecretAdapters secretAdapters;
    /** What the functions bound to this root may do together; null until one binds (tests driving the core directly). */
    private volatile Grants served;

    // Secrets Manager and SQS through the AWS SDK's clients (dev.runner.aws), each built once.
    private final Part<Secrets> secrets = part("secrets", () -> new Secrets(new SecretsManagerSource(
            endpoint(config().secretsEndpoint()), config().awsRegion(), credentialsFor(config().secretsEndpoint()))));
    private final Part<Database> db = part("database", () -> Database.connect(config().database().jdbcUrl(), databaseCredentials(),
            config().databasePoolSize(), costs()));
    private final Part<QueueClient> queues = part("queues", () -> QueueClient.create(endpoint(config().sqsEndpoint()),
            config().awsRegion(), credentialsFor(config().sqsEndpoint()), costs(), this::allows));
    private final Part<AwsCredentialsProvider> roleCredentials = part("roleCredentials", () -> AwsCredentialChain.role(config()));
    private final Part<Redis> redis = part("redis", () -> Redis.connect(new Redis.Settings(config().redisUrl(), config().redisMode(),
            secretAdapters().redisAuth(), Redis.DEFAULT_TIMEOUT, config().redisTrustedCertificates()), costs()));
    private final Part<HandlerUrlPolicy> handlerUrls = part("handlerUrls", () -> new HandlerUrlPolicy(config().handlerAllowedNetworks()));
    private final Part<SigningKeyStore> signingKeys = part("signingKeys", () -> new SigningKeyStore(database()));
    // The handlers' own keys, read at most once per TTL per handler; the global key only for handlers that never had one.
    private final Part<HandlerClient> handlers = part("handlers", () -> new HandlerClient(
            new HandlerSigning(signingKeys.get(), secretAdapters().handlerSigningKey(), LOCAL_TYPES_TTL, clock()), handlerUrls.get(), clock(), costs(), metrics()));
    private final Part<Keys> keys = part("keys", () -> new Keys(config().redisPrefix()));
    // A lease outlives any live worker's call (leases end at report); a dead worker's frees after the claim lease.
    private final Part<Guard> guard = part("guard", () -> new Guard(redis(), keys.get(),
            new Guard.Settings(config().breaker(), config().tenantLimit(), config().itemClaimLease()), clock(), metrics()));
    private final Part<RunStore> runStore = part("runStore", () -> new RunStore(database(), metrics()));
    private final Part<ItemStore> itemStore = part("itemStore", () -> new ItemStore(database(), clock()));
    private final Part<PauseStore> pauseStore = part("pauseStore", () -> new PauseStore(database()));
    private final Part<ScheduleStore> scheduleStore = part("scheduleStore", () -> new ScheduleStore(database()));
    private final Part<DeliveryStore> deliveryStore = part("deliveryStore", () -> new DeliveryStore(database()));
    private final Part<IngestProducers> ingestProducers = part("ingestProducers", () -> new IngestProducers(database(),
            LOCAL_TYPES_TTL, clock()));
    private final Part<DeadLetterStore> deadLetterStore = part("deadLetterStore", () -> new DeadLetterStore(database()));
    private final Part<Integrations> integrations = part("integrations", () -> new Integrations(
            new IntegrationStore(database(), scheduleStore.get()),
            new TypesCache(redis(), keys.get(), config().typesCacheTtl(), LOCAL_TYPES_TTL, clock(), metrics()), LOCAL_TYPES_TTL, clock()));
    private final Part<OutboxStore> outbox = part("outbox", () -> new OutboxStore(database(), clock()));
    private final Part<ItemPacker> packer = part("packer", () -> new ItemPacker(config().itemsPerMessage()));
    private final Part<BacklogStore> backlogStore = part("backlogStore", () -> new BacklogStore(database()));
    private final Part<ItemDispatcher> dispatcher = part("dispatcher", () -> new ItemDispatcher(config().queues(), queues(),
            new BacklogHorizon(guard(), backlogStore.get(), config().tenantLimit().backlogHorizon(), metrics()), packer.get(),
            database(), outbox.get()));
    private final Part<RunDispatcher> runDispatcher = part("runDispatcher", () -> new RunDispatcher(config().queues(), queues(),
            database(), outbox.get()));
    private final Part<RunRequestStore> runRequests = part("runRequests", () -> new RunRequestStore(database(),
            config().runIdempotencyWindow()));
    private final Part<RunService> runService = part("runService", () -> new RunService(integrations(), runStore(), runRequests.get(),
            runDispatcher.get(), new DeliveredRuns(runStore(), itemStore(), dispatcher.get(), clock()), clock()));
    private final Part<RunWorker> runWorker = part("runWorker", () -> new RunWorker(config(), integrations(), queues(), deadLetterStore(),
            new FetchStep(config().runTimeReserve(), runStore(), itemStore(), integrations(), handlers(), dispatcher.get())));
    private final Part<RecordOrder> recordOrder = part("recordOrder", () -> new RecordOrder(itemStore(), database(),
            RecordOrder.RECHECK));
    // Callbacks (issue 31): the URLs given to handlers, where pending items wait, and their late answers settled.
    private final Part<CallbackUrls> callbackUrls = part("callbackUrls", () -> new CallbackUrls(config().callbacks().baseUrl(),
            secretAdapters().callbackKey(), clock()));
    private final Part<CallbackStore> callbackStore = part("callbackStore", () -> new CallbackStore(database()));
    private final Part<HeldLeases> heldLeases = part("heldLeases", () -> new HeldLeases(redis(), keys.get(), clock()));
    private final Part<SettleStep> settling = part("settling", () -> new SettleStep(config(), recordOrder.get(), runStore(), queues(),
            metrics(), new PendingWaits(callbackStore.get(), heldLeases.get(), integrations(), clock())));
    private final Part<CallbackCompletion> callbacks = part("callbacks", () -> new CallbackCompletion(callbackStore.get(),
            heldLeases.get(), settling.get(), integrations()));
    private final Part<CallbackEndpoint> callbackEndpoint = part("callbackEndpoint", () -> new CallbackEndpoint(callbackUrls.get(),
            callbacks.get()));
    private final Part<ItemWorker> itemWorker = part("itemWorker", () -> {
        CallTimes callTimes = new CallTimes();
        return new ItemWorker(integrations(), deadLetterStore(),
                new AdmissionStep(guard(), pauseStore.get(), integrations(), callTimes, config().laneWait(),
                        config().tenantLimit().shortestDeferral()),
                new ClaimStep(recordOrder.get(), config().itemClaimLease()),
                new CallStep(handlers(), guard(), callTimes, config().retry(), config().tenantLimit().shortestDeferral(), callbackUrls.get()),
                settling.get());
    });
    private final Part<EventIntake> intake = part("intake", () -> new EventIntake(deliveryStore.get(), dispatcher.get(), metrics(),
            clock()));
    private final Part<WebhookService> webhooks = part("webhooks", () -> new WebhookService(config().webhooks(), integrations(),
            intake.get(), clock()));
    private final Part<ItemQueries> itemQueries = part("itemQueries", () -> new ItemQueries(database()));
    // A bulk action's budget is wall time, whatever clock the root runs on.
    private final Part<BulkActions> bulk = part("bulk", () -> new BulkActions(new BulkActionStore(database()),
            new BulkPages(new RedriveStore(database()), new CancelStore(database()), runStore(), pauseStore.get(), heldLeases.get()), dispatcher.get(),
            BulkActions.Settings.of(config(), Clock.systemUTC())));
    private final Part<PauseService> pauses = part("pauses", () -> new PauseService(integrations(), pauseStore.get(), guard(),
            bulk.get()));
    private final Part<RedriveService> redrive = part("redrive", () -> new RedriveService(new RedriveStore(database()), runStore(),
            dispatcher.get()));
    private final Part<ManagementApi> api = part("api", () -> new ManagementApi(secretAdapters().apiKey(), config().managementBearerKeys(),
            managementIamPrincipals(), new ManagementApi.Backend(
            database(), integrations(), new IntegrationQueries(database()), runService(), runStore(), new RunQueries(database()),
            itemQueries.get(), new ApiKeyStore(database()), redrive.get(), bulk.get(), pauses.get(), pauseStore.get(),
            guard(), new GuardReadings(redis(), keys.get(), config().breaker(), clock()), queues(), handlerUrls.get(),
            ingestProducers.get(), signingKeys.get(), config(), clock())));
    // Retention's budget is wall time, whatever clock the root runs on.
    private final Part<Scheduler> scheduler = part("scheduler", () -> new Scheduler(scheduleStore.get(), runService(), runDispatcher.get(),
            new Sweeps(new LostWorkSweep(config().sweeps(), outbox.get(), runStore(), itemStore(), runDispatcher.get(), dispatcher.get()),
                    callbacks.get(),
                    bulk.get(),
                    new RetentionSweep(config(), deliveryStore.get(), runRequests.get(), new RetentionStore(database(), Clock.systemUTC()),
                            Clock.systemUTC()),
                    new BacklogRelease(backlogStore.get(), guard(), config().tenantLimit(), dispatcher.get()::dispatch, clock()))));
    private final Part<IngestService> ingest = part("ingest", () -> new IngestService(intake.get(), integrations(), deadLetterStore(),
            new IngestBinding(integrations(), ingestProducers.get(), config().webhooks().signatureTolerance(), clock()),
            config().webhooks()));
    private final Part<DeadLetterService> deadLetters = part("deadLetters", () -> new DeadLetterService(config(), itemStore(),
            runStore(), deadLetterStore(), metrics(), DeadLetterService.Pause.SLEEP));

    public Runner(RunnerConfig config, Clock clock) {
        this(config, clock, CostTracker.NONE);
    }

    public Runner(RunnerConfig config, Clock clock, CostTracker costs) {
        this(config, clock, costs, Metrics.NONE);
    }

    /** {@code metrics} hears what the parts do (docs/metrics.md); the functions plug one that publishes per invocation. */
    public Runner(RunnerConfig config, Clock clock, CostTracker costs, Metrics metrics) {
        this.config = config;
        this.clock = clock;
        this.costs = costs;
        this.metrics = metrics;
        this.secretAdapters = new SecretAdapters(config, this::secret);
    }

    /** Lambda's root: the configuration the template gives the function. */
    public static Runner fromEnvironment(Map<String, String> environment) {
        return fromEnvironment(environment, Metrics.NONE);
    }

    public static Runner fromEnvironment(Map<String, String> environment, Metrics metrics) {
        return new Runner(RunnerConfig.from(environment), Clock.systemUTC(), CostTracker.NONE, metrics);
    }

    /**
     * Binds a function's grants to this root; returns the root. Several functions bound to one root
     * (tests sharing it) may do what any of them may; in Lambda and the local runtime each function
     * has a root of its own.
     */
    public Runner serve(Grants grants) {
        synchronized (this) {
            served = served == null ? grants : served.and(grants);
        }
        return this;
    }

    /** Applies the schema migrations (the Migration custom resource's work) with this root's database login. */
    public void migrate() {
        Database.migrate(config.database().jdbcUrl(), databaseCredentials());
        if (config.secret(SecretRole.DATABASE_LOGINS) != null) {
            String prefix = secretId(SecretRole.DATABASE_LOGINS);
            Database.enableLogins(config.database().jdbcUrl(), databaseCredentials(), role -> {
                String name = role.secretName(prefix);
                DatabaseLogin login = DatabaseLogin.parse(name, secrets.get().secret(name).value());
                if (!login.username().equals(role.roleName())) {
                    throw new IllegalStateException("secret " + name + " is the login of " + login.username() + ", not of " + role.roleName());
                }
                return login.password();
            });
        }
    }

    /**
     * A secret this root's functions are granted, by role.
     *
     * @throws IllegalStateException not granted, or no secret named for the role
     */
    public Secret secret(SecretRole role) {
        return secrets.get().secret(secretId(role));
    }

    private String secretId(SecretRole role) {
        Grants grants = served;
        if (grants != null && !grants.reads().contains(role)) {
            throw new IllegalStateException("this function is not granted the " + role + " secret; declare it in its grants"
                    + " and template.yaml's policies");
        }
        String id = config.secret(role);
        if (id == null) {
            throw new IllegalStateException(role.variable() + " is not set");
        }
        return id;
    }

    public RunnerConfig config() { return config; }
    public Clock clock() { return clock; }
    public CostTracker costs() { return costs; }
    public Metrics metrics() { return metrics; }
    public Database database() { return db.get(); }
    public QueueClient queues() { return queues.get(); }
    public Redis redis() { return redis.get(); }
    public HandlerClient handlers() { return handlers.get(); }
    public Guard guard() { return guard.get(); }
    public RunStore runStore() { return runStore.get(); }
    public ItemStore itemStore() { return itemStore.get(); }

    public ItemQueries itemQueries() { return itemQueries.get(); }
    public DeadLetterStore deadLetterStore() { return deadLetterStore.get(); }
    public Integrations integrations() { return integrations.get(); }
    public RunService runService() { return runService.get(); }
    public RunWorker runWorker() { return runWorker.get(); }
    public ItemWorker itemWorker() { return itemWorker.get(); }
    public WebhookService webhooks() { return webhooks.get(); }
    public CallbackEndpoint callbackEndpoint() { return callbackEndpoint.get(); }
    public CallbackCompletion callbacks() { return callbacks.get(); }
    public CallbackUrls callbackUrls() { return callbackUrls.get(); }
    public ManagementApi api() { return api.get(); }
    public Scheduler scheduler() { return scheduler.get(); }
    public IngestService ingest() { return ingest.get(); }
    public IngestProducers ingestProducers() { return ingestProducers.get(); }
    public DeadLetterService deadLetters() { return deadLetters.get(); }
    public BulkActions bulk() { return bulk.get(); }
    public PauseService pauses() { return pauses.get(); }

    private boolean allows(QueueClient.Use use, String queueUrl) {
        Grants grants = served;
        return grants == null || grants.allows(use, queueUrl, config.queues());
    }

    /** Read when the API is built, so a bad entry fails the API function's start and says which. */
    private IamPrincipals managementIamPrincipals() {
        try {
            return IamPrincipals.parse(config.managementIamPrincipals());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("RUNNER_MANAGEMENT_IAM_PRINCIPALS: " + e.getMessage(), e);
        }
    }

    /** The database login: from its secret, re-read when Postgres refuses it (a rotation); else the values given. */
    private Credentials databaseCredentials() {
        return secretAdapters.database();
    }

    private static URI endpoint(String override) {
        return override == null ? null : URI.create(override);
    }

    private AwsCredentialsProvider credentialsFor(String endpointOverride) {
        return AwsCredentialChain.forEndpoint(config, endpointOverride, roleCredentials::get);
    }

    /** What a function's path connects to, for {@link #openInBackground}. */
    public enum Connection { DATABASE, REDIS, QUEUES }

    /**
     * Starts opening, each on a thread of its own, what a function's path connects to: a Postgres
     * connection (its login secret read, kept in the pool), the Redis connection, the SQS client. A
     * Lambda function calls it at the end of init with what its main path uses, so the first
     * invocation finds them open (or opening) instead of paying for them in turn; returns at once. A
     * failure is logged and left to the first request, which tries again as it would have anyway.
     */
    public Opening openInBackground(Set<Connection> connections) {
        Map<String, Runnable> openers = new LinkedHashMap<>();
        if (connections.contains(Connection.DATABASE)) {
            openers.put("database", () -> database().ping());
        }
        if (connections.contains(Connection.REDIS)) {
            openers.put("redis", () -> {
                if (!redis().open()) {
                    throw new IllegalStateException("Redis not reachable now");
                }
            });
        }
        if (connections.contains(Connection.QUEUES)) {
            openers.put("queues", this::queues);
        }
        return Openers.start(openers);
    }

    /** Primes the handler calls' HTTP path, when this root built the handler client (the functions that call handlers). */
    public void primeHandlerCalls() {
        if (handlers.isBuilt()) {
            handlers().prime();
        }
    }

    /**
     * Closes the connections made so far and keeps every part: the next use connects again. Before a
     * SnapStart checkpoint, since a connection made before it is dead after a restore (Redis, Postgres,
     * handlers; the AWS client's idle sockets are retried by the client), and forgets the role's
     * credentials read so far, which the snapshot would otherwise hold.
     */
    public void disconnect() {
        if (roleCredentials.isBuilt() && roleCredentials.get() instanceof RoleCredentials role) {
            role.forget();
        }
        if (redis.isBuilt()) {
            redis().disconnect();
        }
        if (handlers.isBuilt()) {
            handlers().disconnect();
        }
        if (db.isBuilt() && database().dataSource() instanceof HikariDataSource pool && pool.getHikariPoolMXBean() != null) {
            pool.getHikariPoolMXBean().softEvictConnections();
        }
    }

    /** Names of the parts built so far: what a function's cold start paid for. */
    public synchronized Set<String> built() {
        Set<String> names = new TreeSet<>();
        parts.stream().filter(Part::isBuilt).forEach(part -> names.add(part.name()));
        return names;
    }

    /** Closes what was built; nothing else is opened to be closed. */
    @Override
    public void close() {
        for (Part<?> part : parts.reversed()) {
            if (part.isBuilt() && part.get() instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + part.name(), e);
                }
            }
        }
    }

    private <T> Part<T> part(String name, Supplier<T> build) {
        Part<T> part = new Part<>(name, build, this);
        parts.add(part);
        return part;
    }

    private SecretAdapters secretAdapters() {
        return secretAdapters;
    }
}
