package dev.runner.app;

import dev.runner.api.ManagementApi;
import dev.runner.cache.TypesCache;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterService;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.guard.Guard;
import dev.runner.pause.PauseService;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.ingest.IngestService;
import dev.runner.integration.IntegrationStore;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemDispatcher;
import dev.runner.item.ItemStore;
import dev.runner.item.ItemWorker;
import dev.runner.queue.QueueClient;
import dev.runner.run.RunService;
import dev.runner.run.RunStore;
import dev.runner.run.RunWorker;
import dev.runner.schedule.Scheduler;
import dev.runner.store.Database;
import dev.runner.webhook.WebhookService;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The composition root: builds every client and service once per cold start, by hand, in
 * dependency order. Function classes take what they need from here; so do the local runtime,
 * tests and benchmarks. Roots are shared per environment, so functions of one JVM configured
 * alike (the local runtime) share pools and connections.
 */
public final class Runner implements AutoCloseable {

    private static final Map<Map<String, String>, Runner> BY_ENVIRONMENT = new ConcurrentHashMap<>();
    /** The in-process layer in front of the Redis types cache: short, so a changed type is seen soon everywhere. */
    private static final Duration LOCAL_TYPES_TTL = Duration.ofSeconds(5);

    private final RunnerConfig config;
    private final Database db;
    private final QueueClient queues;
    private final HandlerClient handlers;
    private final RunStore runStore;
    private final ItemStore itemStore;
    private final Integrations integrations;
    private final DeadLetterStore deadLetterStore;
    private final RunService runService;
    private final RunWorker runWorker;
    private final ItemWorker itemWorker;
    private final WebhookService webhooks;
    private final ManagementApi api;
    private final Scheduler scheduler;
    private final IngestService ingest;
    private final DeadLetterService deadLetters;
    private final Redis redis;
    private final Guard guard;
    private final PauseService pauses;

    public Runner(RunnerConfig config, Clock clock) {
        this.config = config;
        this.db = Database.connect(config.database(), config.databasePoolSize());
        this.queues = QueueClient.create(config);
        this.handlers = new HandlerClient(config.handlerSigningSecret(), new HandlerUrlPolicy(config.handlerAllowedNetworks()), clock);
        this.runStore = new RunStore(db);
        this.itemStore = new ItemStore(db, clock);
        this.deadLetterStore = new DeadLetterStore(db);
        this.redis = Redis.connect(config.redisUrl());
        Keys keys = new Keys(config.redisPrefix());
        TypesCache typesCache = new TypesCache(redis, keys, config.typesCacheTtl(), LOCAL_TYPES_TTL, clock);
        // A lease outlives any live worker's call (leases end at report); a dead worker's frees after the claim lease.
        this.guard = new Guard(redis, keys, config.breaker(), config.tenantLimit(), clock, config.itemClaimLease());
        this.integrations = new Integrations(new IntegrationStore(db), typesCache);
        ItemDispatcher dispatcher = new ItemDispatcher(config.queues(), queues, guard);
        this.runService = new RunService(config, db, runStore, itemStore, integrations, queues, dispatcher, clock);
        this.runWorker = new RunWorker(config, runStore, itemStore, integrations, handlers, queues, deadLetterStore, dispatcher);
        this.itemWorker = new ItemWorker(config, itemStore, runStore, integrations, handlers, queues, deadLetterStore, guard);
        this.webhooks = new WebhookService(config.webhooks(), integrations, runService, db, clock);
        this.api = new ManagementApi(config, integrations, runService, runStore, itemStore, db, dispatcher, clock);
        this.pauses = new PauseService(integrations, itemStore, db, guard, dispatcher);
        api.route("POST", "/handlers/{integrationKey}/{handlerKey}/pause", pauses::pause)
                .route("POST", "/handlers/{integrationKey}/{handlerKey}/resume", pauses::resume)
                .route("GET", "/breakers/{integrationKey}", pauses::breaker);
        this.scheduler = new Scheduler(db, runService, runStore, itemStore, dispatcher);
        this.ingest = new IngestService(runService, deadLetterStore);
        this.deadLetters = new DeadLetterService(config.queues(), itemStore, runStore, deadLetterStore);
    }

    /** Every root built for an environment in this JVM: what benchmarks read their cost meters from. */
    public static java.util.Collection<Runner> roots() {
        return java.util.List.copyOf(BY_ENVIRONMENT.values());
    }

    /** The root for this environment, built on first use (a Lambda cold start) and kept. */
    public static Runner forEnvironment(Map<String, String> environment) {
        return BY_ENVIRONMENT.computeIfAbsent(Map.copyOf(environment),
                env -> new Runner(RunnerConfig.from(env), Clock.systemUTC()));
    }

    public RunnerConfig config() { return config; }
    public Database database() { return db; }
    public QueueClient queues() { return queues; }
    public HandlerClient handlers() { return handlers; }
    public RunStore runStore() { return runStore; }
    public ItemStore itemStore() { return itemStore; }
    public Integrations integrations() { return integrations; }
    public DeadLetterStore deadLetterStore() { return deadLetterStore; }
    public RunService runService() { return runService; }
    public RunWorker runWorker() { return runWorker; }
    public ItemWorker itemWorker() { return itemWorker; }
    public WebhookService webhooks() { return webhooks; }
    public ManagementApi api() { return api; }
    public Scheduler scheduler() { return scheduler; }
    public IngestService ingest() { return ingest; }
    public DeadLetterService deadLetters() { return deadLetters; }
    public Guard guard() { return guard; }
    public Redis redis() { return redis; }

    @Override
    public void close() {
        BY_ENVIRONMENT.values().remove(this);
        queues.close();
        db.close();
        redis.close();
    }
}
