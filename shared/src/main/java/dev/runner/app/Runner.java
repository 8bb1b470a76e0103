package dev.runner.app;

import dev.runner.api.ManagementApi;
import dev.runner.apikey.ApiKeyStore;
import dev.runner.cache.TypesCache;
import dev.runner.config.RunnerConfig;
import dev.runner.cost.CostTracker;
import dev.runner.delivery.DeliveryStore;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.guard.Guard;
import dev.runner.guard.GuardReadings;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.integration.IntegrationQueries;
import dev.runner.integration.IntegrationStore;
import dev.runner.integration.Integrations;
import dev.runner.item.ItemQueries;
import dev.runner.item.ItemStore;
import dev.runner.pause.PauseStore;
import dev.runner.pipeline.DeadLetterService;
import dev.runner.pipeline.IngestService;
import dev.runner.pipeline.ItemDispatcher;
import dev.runner.pipeline.ItemWorker;
import dev.runner.pipeline.PauseService;
import dev.runner.pipeline.RedriveService;
import dev.runner.pipeline.RunService;
import dev.runner.pipeline.RunWorker;
import dev.runner.pipeline.Scheduler;
import dev.runner.queue.QueueClient;
import dev.runner.redis.Keys;
import dev.runner.redis.Redis;
import dev.runner.run.RunQueries;
import dev.runner.run.RunStore;
import dev.runner.schedule.ScheduleStore;
import dev.runner.store.Database;
import dev.runner.webhook.WebhookService;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
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
 */
public final class Runner implements AutoCloseable {

    /** The in-process layer in front of the Redis types cache (and of tenant integrations): short, so a change is seen soon everywhere. */
    private static final Duration LOCAL_TYPES_TTL = Duration.ofSeconds(5);

    private final RunnerConfig config;
    private final Clock clock;
    private final CostTracker costs;
    private final List<Part<?>> parts = new ArrayList<>();

    private final Part<Database> db = part("database", () -> Database.connect(config().database(), config().databasePoolSize(), costs()));
    private final Part<QueueClient> queues = part("queues", () -> QueueClient.create(config(), costs()));
    private final Part<Redis> redis = part("redis", () -> Redis.connect(config().redisUrl(), costs()));
    private final Part<HandlerUrlPolicy> handlerUrls = part("handlerUrls", () -> new HandlerUrlPolicy(config().handlerAllowedNetworks()));
    private final Part<HandlerClient> handlers = part("handlers", () -> new HandlerClient(config().handlerSigningSecret(),
            handlerUrls.get(), clock(), costs()));
    private final Part<Keys> keys = part("keys", () -> new Keys(config().redisPrefix()));
    // A lease outlives any live worker's call (leases end at report); a dead worker's frees after the claim lease.
    private final Part<Guard> guard = part("guard", () -> new Guard(redis(), keys.get(), config().breaker(), config().tenantLimit(),
            clock(), config().itemClaimLease()));
    private final Part<RunStore> runStore = part("runStore", () -> new RunStore(database()));
    private final Part<ItemStore> itemStore = part("itemStore", () -> new ItemStore(database(), clock()));
    private final Part<PauseStore> pauseStore = part("pauseStore", () -> new PauseStore(database()));
    private final Part<ScheduleStore> scheduleStore = part("scheduleStore", () -> new ScheduleStore(database()));
    private final Part<DeliveryStore> deliveryStore = part("deliveryStore", () -> new DeliveryStore(database()));
    private final Part<DeadLetterStore> deadLetterStore = part("deadLetterStore", () -> new DeadLetterStore(database()));
    private final Part<Integrations> integrations = part("integrations", () -> new Integrations(
            new IntegrationStore(database(), scheduleStore.get()),
            new TypesCache(redis(), keys.get(), config().typesCacheTtl(), LOCAL_TYPES_TTL, clock()), LOCAL_TYPES_TTL, clock()));
    private final Part<ItemDispatcher> dispatcher = part("dispatcher", () -> new ItemDispatcher(config().queues(), queues(), guard()));
    private final Part<RunService> runService = part("runService", () -> new RunService(config().queues(), database(), runStore(),
            itemStore(), integrations(), queues(), dispatcher.get(), clock()));
    private final Part<RunWorker> runWorker = part("runWorker", () -> new RunWorker(config(), runStore(), itemStore(), integrations(),
            handlers(), queues(), deadLetterStore(), dispatcher.get()));
    private final Part<ItemWorker> itemWorker = part("itemWorker", () -> new ItemWorker(config(), itemStore(), pauseStore.get(),
            runStore(), integrations(), handlers(), queues(), deadLetterStore(), guard()));
    private final Part<WebhookService> webhooks = part("webhooks", () -> new WebhookService(config().webhooks(), integrations(),
            runService(), deliveryStore.get(), clock()));
    private final Part<PauseService> pauses = part("pauses", () -> new PauseService(integrations(), pauseStore.get(), guard(),
            dispatcher.get()));
    private final Part<RedriveService> redrive = part("redrive", () -> new RedriveService(database(), itemStore(), runStore(),
            dispatcher.get()));
    private final Part<ManagementApi> api = part("api", () -> new ManagementApi(config().apiKey(), config().managementBearerKeys(), new ManagementApi.Backend(
            database(), integrations(), new IntegrationQueries(database()), runService(), runStore(), new RunQueries(database()),
            itemStore(), new ItemQueries(database()), new ApiKeyStore(database()), redrive.get(), pauses.get(), pauseStore.get(),
            guard(), new GuardReadings(redis(), keys.get(), config().breaker(), clock()), queues(), handlerUrls.get(), config(), clock())));
    private final Part<Scheduler> scheduler = part("scheduler", () -> new Scheduler(config(), database(), scheduleStore.get(), runService(),
            runStore(), itemStore(), deliveryStore.get(), queues(), dispatcher.get()));
    private final Part<IngestService> ingest = part("ingest", () -> new IngestService(runService(), deadLetterStore()));
    private final Part<DeadLetterService> deadLetters = part("deadLetters", () -> new DeadLetterService(config().queues(), itemStore(),
            runStore(), deadLetterStore()));

    public Runner(RunnerConfig config, Clock clock) {
        this(config, clock, CostTracker.NONE);
    }

    public Runner(RunnerConfig config, Clock clock, CostTracker costs) {
        this.config = config;
        this.clock = clock;
        this.costs = costs;
    }

    /** Lambda's root: the configuration the template gives the function. */
    public static Runner fromEnvironment(Map<String, String> environment) {
        return new Runner(RunnerConfig.from(environment), Clock.systemUTC());
    }

    public RunnerConfig config() { return config; }
    public Clock clock() { return clock; }
    public CostTracker costs() { return costs; }
    public Database database() { return db.get(); }
    public QueueClient queues() { return queues.get(); }
    public Redis redis() { return redis.get(); }
    public HandlerClient handlers() { return handlers.get(); }
    public Guard guard() { return guard.get(); }
    public RunStore runStore() { return runStore.get(); }
    public ItemStore itemStore() { return itemStore.get(); }
    public DeadLetterStore deadLetterStore() { return deadLetterStore.get(); }
    public Integrations integrations() { return integrations.get(); }
    public RunService runService() { return runService.get(); }
    public RunWorker runWorker() { return runWorker.get(); }
    public ItemWorker itemWorker() { return itemWorker.get(); }
    public WebhookService webhooks() { return webhooks.get(); }
    public ManagementApi api() { return api.get(); }
    public Scheduler scheduler() { return scheduler.get(); }
    public IngestService ingest() { return ingest.get(); }
    public DeadLetterService deadLetters() { return deadLetters.get(); }

    /** Names of the parts built so far: what a function's cold start paid for. */
    public synchronized Set<String> built() {
        Set<String> names = new TreeSet<>();
        parts.stream().filter(Part::isBuilt).forEach(part -> names.add(part.name));
        return names;
    }

    /** Closes what was built; nothing else is opened to be closed. */
    @Override
    public void close() {
        for (Part<?> part : parts.reversed()) {
            if (part.value instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + part.name, e);
                }
            }
        }
    }

    private <T> Part<T> part(String name, Supplier<T> build) {
        Part<T> part = new Part<>(name, build);
        parts.add(part);
        return part;
    }

    /** A component built once, on first use. */
    private final class Part<T> {
        private final String name;
        private final Supplier<T> build;
        private volatile T value;

        Part(String name, Supplier<T> build) {
            this.name = name;
            this.build = build;
        }

        T get() {
            T built = value;
            if (built == null) {
                synchronized (Runner.this) {
                    built = value;
                    if (built == null) {
                        built = build.get();
                        value = built;
                    }
                }
            }
            return built;
        }

        boolean isBuilt() {
            return value != null;
        }
    }
}
