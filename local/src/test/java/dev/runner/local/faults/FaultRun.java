package dev.runner.local.faults;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import dev.runner.local.LocalOptions;
import dev.runner.local.LocalRuntime;
import dev.runner.local.RunnerApi;
import dev.runner.local.demo.DemoIntegration;
import dev.runner.security.StandardWebhooks;
import dev.runner.trigger.Trigger;

import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The fault run (issue 7): a workload of thousands of items over many tenants, webhook runs, ingest
 * messages and manual runs, on a local runtime wired from template.yaml, while Redis and Postgres
 * restart under it, handlers flap and hang, and messages are delivered again: SQS's copies, and
 * webhooks and ingest messages sent again by their senders under the same id. Then it reads what
 * Runner recorded and counts what went wrong: items lost (accepted, no row), stuck (not ended, or
 * dead without dlq_at, or runs not ended), marked succeeded twice, deliveries made twice, or items
 * succeeded without the handler ever saying so.
 * It asserts nothing: {@code FaultRunIT} does, the benchmarks print the same {@link Figures}.
 *
 * <p>Timings are the defaults scaled down so the run takes a couple of minutes: 200 ms
 * backoff base, breaker open 1 s, the scheduler's sweeps every second with short graces, and
 * visibility timeouts of tens of seconds instead of six minutes (kept above the claim lease, which
 * stays above the longest batch, as in AWS).
 */
public final class FaultRun {

    /** How big the run is and how hard it is hit. */
    public record Plan(int tenants, int manualRunsPerTenant, int pagesPerRun, int pageSize, int webhooksPerTenant,
                       int itemsPerWebhook, int ingestPerTenant, int rejectEvery, Duration submitOver, Duration redisDown,
                       Duration postgresDown, Duration handlerWindow, double flapShare, double hangShare, Duration settleWithin) {

        public Plan {
            if (tenants < INTEGRATIONS.size()) {
                throw new IllegalArgumentException("tenants < " + INTEGRATIONS.size() + ": " + tenants + " (one integration each, round robin)");
            }
            if (rejectEvery < 1) {
                throw new IllegalArgumentException("rejectEvery < 1: " + rejectEvery);
            }
        }

        /** 4,416 items over 24 tenants: 24 manual runs of 100 items, 96 webhooks of 20, 96 ingest messages; one fault of each kind. */
        public static Plan standard() {
            return new Plan(24, 1, 4, 25, 4, 20, 4, 50, Duration.ofSeconds(15), Duration.ofSeconds(3), Duration.ofSeconds(3),
                    Duration.ofSeconds(4), 0.15, 0.03, Duration.ofMinutes(3));
        }

        public Plan withTenants(int count) {
            return new Plan(count, manualRunsPerTenant, pagesPerRun, pageSize, webhooksPerTenant, itemsPerWebhook, ingestPerTenant,
                    rejectEvery, submitOver, redisDown, postgresDown, handlerWindow, flapShare, hangShare, settleWithin);
        }

        long items() {
            return (long) tenants * ((long) manualRunsPerTenant * pagesPerRun * pageSize + (long) webhooksPerTenant * itemsPerWebhook
                    + ingestPerTenant);
        }
    }

    /**
     * What the run did and found. {@code lost}, {@code stuck} and {@code duplicates} must be 0.
     *
     * @param faults             faults injected, by kind, in the order they were planned
     * @param clientRetries      requests (webhooks, POST /runs) answered 5xx or cut during an outage and sent again
     * @param refused            requests never accepted (a 4xx, or still failing after a minute and a half)
     * @param lost               accepted items with no row: webhook and ingest items, and items of manual runs that did not fail
     * @param stuckItems         items neither succeeded nor dead when the run stopped waiting
     * @param deadWithoutDlqAt   dead items whose dlq_at is not set
     * @param runsNotEnded       runs of the fault run's tenants without finished_at
     * @param duplicates         items Runner marked succeeded more than once, or wrote to after it did
     * @param madeTwice          deliveries (webhooks, ingest messages) whose items Runner made more than once
     * @param phantomSuccesses   items recorded succeeded that the handler never answered as succeeded
     * @param handlerRepeats     items the handler was called for more than once (allowed: at-least-once)
     * @param handlerWorkedTwice items the handler did successfully more than once (allowed; Runner still recorded one success)
     */
    public record Figures(int tenants, long acceptedItems, long webhookItems, long ingestItems, long manualItems, int webhookRuns,
                          int manualRuns, Map<String, Long> itemsByStatus, Map<String, Long> runsByStatus, Map<String, Long> faults,
                          long clientRetries, long refused, long lost, long stuckItems, long deadWithoutDlqAt, long runsNotEnded,
                          long duplicates, long madeTwice, long phantomSuccesses, long handlerRepeats, long handlerWorkedTwice,
                          Duration took, Duration settledAfterLastFault) {

        public long stuck() {
            return stuckItems + deadWithoutDlqAt + runsNotEnded;
        }

        public long failedRuns() {
            return runsByStatus.getOrDefault("failed", 0L);
        }

        /** The figures as the fault run prints them. */
        public String describe() {
            StringBuilder out = new StringBuilder();
            out.append(String.format("Fault run: %,d items accepted (%,d from %d manual runs, %,d from %d webhooks, %,d ingest messages)"
                    + " over %d tenants, %d integrations%n",
                    acceptedItems, manualItems, manualRuns, webhookItems, webhookRuns, ingestItems, tenants, INTEGRATIONS.size()));
            out.append("  faults injected:\n");
            faults.forEach((kind, count) -> out.append(String.format("    %-44s %,d%n", kind, count)));
            out.append(String.format("  clients: %,d requests sent again after a 5xx or a cut connection, %d never accepted%n", clientRetries, refused));
            out.append(String.format("  items: %s; runs: %s%n", itemsByStatus, runsByStatus));
            out.append(String.format("  lost %d, stuck %d (items not ended %d, dead without dlq_at %d, runs not ended %d), duplicates %d,"
                    + " deliveries made twice %d, phantom successes %d%n",
                    lost, stuck(), stuckItems, deadWithoutDlqAt, runsNotEnded, duplicates, madeTwice, phantomSuccesses));
            out.append(String.format("  handler side (allowed, at-least-once): %,d items called more than once, %,d done successfully more than once%n",
                    handlerRepeats, handlerWorkedTwice));
            out.append(String.format("  time: %.1f s from the first request until every run ended; %.1f s after the last fault%n",
                    took.toMillis() / 1000.0, settledAfterLastFault.toMillis() / 1000.0));
            return out.toString();
        }
    }

    static final String TENANT_PREFIX = "fr-t";
    private static final String SECRET = "fault-run-webhook-secret";
    private static final String HANDLER = DemoIntegration.HANDLER_KEY;
    /** One integration per misbehaviour, so the others show it stays theirs. Index = role. */
    static final List<String> INTEGRATIONS = List.of("fr-outage", "fr-flap", "fr-hang", "fr-slow");
    private static final int OUTAGE = 0;
    private static final int FLAP = 1;
    private static final int HANG = 2;
    private static final int SLOW = 3;
    /** Generous: on a busy two-core machine a healthy call can take a second; only the hangs should time out. */
    private static final Duration HANDLER_TIMEOUT = Duration.ofSeconds(3);
    /** Longer than the handler timeout: Runner gives up first, the handler finishes the work anyway. */
    private static final Duration HANG_TIME = Duration.ofSeconds(5);
    /** A handler window lasts until it has met this many calls: more than the breaker needs to open. */
    private static final int CALLS_A_WINDOW_MEETS = 8;
    private static final Duration CLIENT_PATIENCE = Duration.ofSeconds(90);
    private static final Duration REDELIVERY_EVERY = Duration.ofSeconds(1);
    /** Second deliveries go on this long after the last request: into the retries and the backlog. */
    private static final Duration REDELIVER_AFTER_SUBMISSION = Duration.ofSeconds(15);

    private static final String REDIS_RESTARTS = "Redis restarts (down %d s, back empty)";
    private static final String POSTGRES_RESTARTS = "Postgres restarts (down %d s)";
    private static final String OUTAGE_WINDOWS = "handler outage windows (every call 503)";
    private static final String OUTAGE_CALLS = "  calls answered 503 in them";
    private static final String FLAPPED_CALLS = "flapped calls (503 at random)";
    private static final String HANG_WINDOWS = "handler hang windows (every call stalls)";
    private static final String HUNG_CALLS = "hung calls (stalled past the timeout)";
    private static final String ITEM_COPIES = "item messages delivered again";
    private static final String DEAD_COPIES = "dead-letter messages delivered again";
    private static final String RUN_COPIES = "RunJobs delivered again";
    private static final String WEBHOOKS_AGAIN = "webhooks sent again (same webhook-id)";
    private static final String INGEST_COPIES = "ingest messages delivered again";

    private final Plan plan;
    private final PrintStream log;
    private final Map<String, LongAdder> faults = new LinkedHashMap<>();
    private final LongAdder clientRetries = new LongAdder();
    private final LongAdder refused = new LongAdder();
    /** Requests done with: accepted, or given up on. */
    private final LongAdder answered = new LongAdder();
    private final Set<List<String>> acceptedWebhookItems = ConcurrentHashMap.newKeySet();
    private final Set<List<String>> acceptedIngestItems = ConcurrentHashMap.newKeySet();
    /** What a sender may send again: accepted webhooks as they went (their id too), and ingest messages as sent. */
    private final List<Runnable> webhooksToSendAgain = new CopyOnWriteArrayList<>();
    private final List<Runnable> ingestToSendAgain = new CopyOnWriteArrayList<>();
    private final Set<UUID> acceptedManualRuns = ConcurrentHashMap.newKeySet();
    private final LongAdder webhookRuns = new LongAdder();

    private FaultRun(Plan plan, PrintStream log) {
        this.plan = plan;
        this.log = log;
        for (String kind : List.of(String.format(REDIS_RESTARTS, plan.redisDown().toSeconds()),
                String.format(POSTGRES_RESTARTS, plan.postgresDown().toSeconds()), OUTAGE_WINDOWS, OUTAGE_CALLS, FLAPPED_CALLS,
                HANG_WINDOWS, HUNG_CALLS, ITEM_COPIES, DEAD_COPIES, RUN_COPIES, WEBHOOKS_AGAIN, INGEST_COPIES)) {
            faults.put(kind, new LongAdder());
        }
    }

    /** Starts a local runtime on {@code template}, runs the plan against it, stops it; progress lines go to {@code log}. */
    public static Figures run(Path template, Plan plan, PrintStream log) {
        return new FaultRun(plan, log).run(template);
    }

    private Figures run(Path template) {
        Map<String, String> environment = Map.of(
                "RUNNER_API_KEY", "fault-run-key",
                "RUNNER_BACKOFF_BASE_MS", "200",
                "RUNNER_BREAKER_OPEN_MS", "1000",
                "RUNNER_ITEM_CLAIM_LEASE_MS", "20000",
                "RUNNER_SWEEP_ITEMS_OVERDUE_S", "10",
                "RUNNER_SWEEP_RUNS_OVERDUE_S", "10",
                "RUNNER_SWEEP_COMPLETION_QUIET_S", "3",
                "RUNNER_SCHEDULE_TICK_MS", "1000");
        try (var runtime = LocalRuntime.start(LocalOptions.defaults(template, environment).withFreePorts().withDemo(false));
             var handler = FlakyHandlerService.start(HANG_TIME);
             var records = new RunnerRecords(runtime.endpoints(), TENANT_PREFIX);
             var redelivery = new Redelivery(runtime.endpoints().sqsEndpoint(), runtime.queueUrls().values())) {
            // Items: visibility above the claim lease (20 s), which is above the longest batch, the order AWS has at
            // 360/120/60 s. Runs: above the longest fetch batch (ten runs, each given up at its first timeout of 3 s).
            redelivery.visibility(Map.of("-items-webhook", Duration.ofSeconds(30), "-items-manual", Duration.ofSeconds(30),
                    "-items-queue", Duration.ofSeconds(30), "-items-schedule", Duration.ofSeconds(30),
                    "-runs-manual", Duration.ofSeconds(60), "-runs-schedule", Duration.ofSeconds(60),
                    "-items-dlq", Duration.ofSeconds(15), "-runs-dlq", Duration.ofSeconds(15)));
            records.installAudit();
            var api = new RunnerApi(runtime.apiUrl(), runtime.apiKey());
            register(api, handler);
            return drive(runtime, api, handler, records, redelivery);
        } catch (SQLException e) {
            throw new IllegalStateException("the fault run could not read Runner's records: " + e.getMessage(), e);
        }
    }

    private void register(RunnerApi api, FlakyHandlerService handler) {
        for (int i = 0; i < INTEGRATIONS.size(); i++) {
            String key = INTEGRATIONS.get(i);
            ObjectNode configs = Json.object().put("concurrency", 50).put("rate_limit_per_minute", 600_000)
                    .put("batch_size", 10).put("timeout_ms", HANDLER_TIMEOUT.toMillis());
            // One single-item handler among the batch ones: both call paths meet the faults.
            ObjectNode spec = Json.object().put("url", handler.url(key)).put("direction", "inbound").put("batch", i != HANG);
            spec.set("configs", configs);
            ObjectNode type = Json.object().put("integrationKey", key).put("name", "fault run " + key);
            type.putObject("handlers").set(HANDLER, spec);
            RunnerApi.require(api.put("/types/" + key, type), 200);
        }
        for (int t = 0; t < plan.tenants(); t++) {
            api.putTenant(tenant(t), integration(t), SECRET, Json.object().put("pages", plan.pagesPerRun()).put("pageSize", plan.pageSize()));
        }
    }

    private Figures drive(LocalRuntime runtime, RunnerApi api, FlakyHandlerService handler, RunnerRecords records,
                          Redelivery redelivery) throws SQLException {
        // Requests, faults and redeliveries each on their own threads: a sender retrying through an
        // outage must not hold up the next fault.
        ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor();
        ExecutorService timeline = Executors.newSingleThreadExecutor();
        ScheduledExecutorService copies = Executors.newSingleThreadScheduledExecutor();
        long started = System.nanoTime();
        try {
            List<Runnable> requests = requests(api, redelivery);
            long interval = plan.submitOver().toNanos() / Math.max(1, requests.size());
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                Runnable request = requests.get(i);
                long due = started + i * interval;
                sent.add(senders.submit(() -> {
                    LockSupport.parkNanos(due - System.nanoTime()); // paced over the submission window
                    try {
                        request.run();
                    } finally {
                        answered.increment();
                    }
                }));
            }
            handler.behaviour(INTEGRATIONS.get(FLAP)).flapping(plan.flapShare());
            handler.behaviour(INTEGRATIONS.get(SLOW)).hanging(plan.hangShare());
            int total = requests.size();
            Future<?> faultsDone = timeline.submit(() -> injectFaults(runtime, handler, total, started));
            long redeliverUntil = started + plan.submitOver().plus(REDELIVER_AFTER_SUBMISSION).toNanos();
            copies.scheduleWithFixedDelay(() -> {
                if (System.nanoTime() < redeliverUntil) {
                    redeliver(records, redelivery);
                }
            }, REDELIVERY_EVERY.toMillis(), REDELIVERY_EVERY.toMillis(), TimeUnit.MILLISECONDS);

            for (Future<?> request : sent) {
                join(request, "a request");
            }
            join(faultsDone, "the faults");
            LockSupport.parkNanos(redeliverUntil - System.nanoTime()); // the last round of second deliveries
            copies.shutdown();
            long lastFault = System.nanoTime();
            progress(started, "every request answered, every fault injected; waiting for every run to end");
            RunnerRecords.Standing standing = settle(records, started, lastFault);
            long settled = System.nanoTime();
            return figures(handler, records, standing, Duration.ofNanos(settled - started), Duration.ofNanos(settled - lastFault));
        } finally {
            copies.shutdownNow();
            timeline.shutdownNow();
            senders.shutdownNow();
        }
    }

    /**
     * One fault of each kind, in turn. Each waits for a share of the requests to be accepted, not for
     * a time: on a slow or busy machine the work it must meet is then flowing all the same.
     */
    private void injectFaults(LocalRuntime runtime, FlakyHandlerService handler, int requests, long started) {
        whenAccepted(0.15, requests);
        handler.behaviour(INTEGRATIONS.get(OUTAGE)).outageFor(plan.handlerWindow(), CALLS_A_WINDOW_MEETS);
        count(OUTAGE_WINDOWS, 1);
        progress(started, "handler of " + INTEGRATIONS.get(OUTAGE) + " answers 503 for " + plan.handlerWindow().toSeconds() + " s");

        whenAccepted(0.3, requests);
        progress(started, "Redis stops");
        runtime.restartRedis(plan.redisDown());
        count(String.format(REDIS_RESTARTS, plan.redisDown().toSeconds()), 1);
        progress(started, "Redis is back, empty");

        whenAccepted(0.5, requests);
        handler.behaviour(INTEGRATIONS.get(HANG)).hangFor(plan.handlerWindow(), CALLS_A_WINDOW_MEETS);
        count(HANG_WINDOWS, 1);
        progress(started, "handler of " + INTEGRATIONS.get(HANG) + " hangs for " + plan.handlerWindow().toSeconds() + " s");

        whenAccepted(0.7, requests);
        progress(started, "Postgres stops");
        runtime.restartPostgres(plan.postgresDown());
        count(String.format(POSTGRES_RESTARTS, plan.postgresDown().toSeconds()), 1);
        progress(started, "Postgres is back");
    }

    /** Webhooks, ingest messages and manual runs, interleaved over tenants, each sent until it is accepted. */
    private List<Runnable> requests(RunnerApi api, Redelivery redelivery) {
        List<Runnable> requests = new ArrayList<>();
        int rounds = Math.max(Math.max(plan.webhooksPerTenant(), plan.manualRunsPerTenant()), plan.ingestPerTenant());
        int itemNumber = 0;
        for (int round = 0; round < rounds; round++) {
            for (int t = 0; t < plan.tenants(); t++) {
                String tenant = tenant(t);
                String integration = integration(t);
                if (round < plan.manualRunsPerTenant()) {
                    requests.add(() -> startRun(api, tenant, integration));
                }
                if (round < plan.webhooksPerTenant()) {
                    ArrayNode body = Json.array();
                    List<String> externalIds = new ArrayList<>();
                    for (int i = 0; i < plan.itemsPerWebhook(); i++) {
                        String externalId = "w" + round + "-" + i;
                        externalIds.add(externalId);
                        // Some items the handler refuses for good: they must end dead, with dlq_at.
                        body.add(Json.object().put("externalId", externalId).put("reject", itemNumber++ % plan.rejectEvery() == 0));
                    }
                    String json = Json.write(body);
                    requests.add(() -> sendWebhook(api, tenant, integration, json, externalIds));
                }
                if (round < plan.ingestPerTenant()) {
                    String externalId = "q" + round;
                    String envelope = Json.write(Json.object().put("tenantId", tenant).put("integrationKey", integration)
                            .put("handlerKey", HANDLER).put("externalId", externalId)
                            .set("payload", Json.object().put("reject", itemNumber++ % plan.rejectEvery() == 0)));
                    requests.add(() -> sendIngest(redelivery, tenant, integration, envelope, externalId));
                }
            }
        }
        return requests;
    }

    private void startRun(RunnerApi api, String tenant, String integration) {
        RunnerApi.Answer answer = untilAccepted(() -> api.post("/runs",
                Json.object().put("tenantId", tenant).put("integrationKey", integration).put("handlerKey", HANDLER)));
        if (answer != null) {
            acceptedManualRuns.add(UUID.fromString(answer.body().path("runId").asText()));
        }
    }

    /** A sender retries a delivery under its first webhook-id, as Standard Webhooks senders do. */
    private void sendWebhook(RunnerApi api, String tenant, String integration, String body, List<String> externalIds) {
        String id = "msg_" + UUID.randomUUID();
        RunnerApi.Answer answer = untilAccepted(() -> api.webhook(tenant, integration, SECRET, body, id));
        if (answer != null) {
            webhookRuns.increment();
            externalIds.forEach(externalId -> acceptedWebhookItems.add(List.of(tenant, integration, externalId)));
            webhooksToSendAgain.add(() -> api.webhook(tenant, integration, SECRET, body, id));
        }
    }

    /** A producer's signed message on the ingest queue; a copy of it later is SQS's second delivery, or the producer's retry. */
    private void sendIngest(Redelivery redelivery, String tenant, String integration, String envelope, String externalId) {
        Map<String, String> signed = StandardWebhooks.headers(List.of(SECRET), "msg_" + UUID.randomUUID(),
                java.time.Instant.now().getEpochSecond(), envelope.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        redelivery.ingest(envelope, signed);
        acceptedIngestItems.add(List.of(tenant, integration, externalId));
        ingestToSendAgain.add(() -> redelivery.ingest(envelope, signed));
    }

    /** What a sender does during an outage: a 5xx or a cut connection is sent again; a 4xx is final. Null if never accepted. */
    private RunnerApi.Answer untilAccepted(Supplier<RunnerApi.Answer> request) {
        long deadline = System.nanoTime() + CLIENT_PATIENCE.toNanos();
        while (true) {
            try {
                RunnerApi.Answer answer = request.get();
                if (answer.status() / 100 == 2) {
                    return answer;
                }
                if (answer.status() < 500) {
                    log.println("  a request was refused: " + answer.status() + " " + answer.body());
                    refused.increment();
                    return null;
                }
            } catch (RuntimeException e) {
                // The connection was cut or the answer unreadable: as a 5xx.
            }
            if (System.nanoTime() > deadline) {
                refused.increment();
                return null;
            }
            clientRetries.increment();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        }
    }

    /** One round of second deliveries: items in any state, dead items' DLQ messages, manual runs' RunJobs. */
    private void redeliver(RunnerRecords records, Redelivery redelivery) {
        try {
            var items = records.randomItems(30, null);
            var dead = records.randomItems(5, "dead");
            var runs = records.randomRuns(3, Trigger.MANUAL);
            redelivery.items(items);
            redelivery.deadLetters(dead);
            redelivery.runs(runs);
            count(ITEM_COPIES, items.size());
            count(DEAD_COPIES, dead.size());
            count(RUN_COPIES, runs.size());
            count(WEBHOOKS_AGAIN, sendAgain(webhooksToSendAgain, 2));
            count(INGEST_COPIES, sendAgain(ingestToSendAgain, 3));
        } catch (SQLException | RuntimeException e) {
            // Postgres is down (the restart fault), or a copy could not be sent: the next round tries again.
        }
    }

    /** Sends {@code n} of these again, at random; returns how many went. */
    private static int sendAgain(List<Runnable> sent, int n) {
        int went = 0;
        for (int i = 0; i < n && !sent.isEmpty(); i++) {
            sent.get(java.util.concurrent.ThreadLocalRandom.current().nextInt(sent.size())).run();
            went++;
        }
        return went;
    }

    /** Waits until every item and run has ended; gives up after the plan's settle time. */
    private RunnerRecords.Standing settle(RunnerRecords records, long started, long from) {
        long deadline = from + plan.settleWithin().toNanos();
        long nextProgress = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        RunnerRecords.Standing standing = null;
        while (true) {
            try {
                standing = records.standing();
                if (standing.openItems() == 0 && standing.openRuns() == 0 && standing.deadWithoutDlqAt() == 0) {
                    progress(started, "every item and run has ended");
                    return standing;
                }
            } catch (SQLException e) {
                // read again
            }
            if (System.nanoTime() > deadline) {
                progress(started, "gave up waiting after " + plan.settleWithin().toSeconds() + " s");
                if (standing == null) {
                    throw new IllegalStateException("Postgres never answered after the faults");
                }
                try {
                    records.openItems(10).forEach(item -> log.printf("    not ended: %s%n", item));
                } catch (SQLException e) {
                    log.printf("    the items not ended could not be read: %s%n", e.getMessage());
                }
                return standing;
            }
            if (System.nanoTime() > nextProgress && standing != null) {
                progress(started, String.format("still open: %d items, %d runs; items %s", standing.openItems(), standing.openRuns(),
                        new TreeMap<>(standing.itemsByStatus())));
                nextProgress = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
        }
    }

    private Figures figures(FlakyHandlerService handler, RunnerRecords records, RunnerRecords.Standing standing, Duration took,
                            Duration afterLastFault) throws SQLException {
        Set<List<String>> rows = records.itemKeys();
        long lost = acceptedWebhookItems.stream().filter(key -> !rows.contains(key)).count()
                + acceptedIngestItems.stream().filter(key -> !rows.contains(key)).count();
        Map<UUID, String> runStatuses = records.runStatuses(acceptedManualRuns);
        Map<UUID, Set<String>> fetched = records.externalIdsByRun(acceptedManualRuns);
        Set<String> expected = new HashSet<>();
        for (int page = 0; page < plan.pagesPerRun(); page++) {
            for (int i = 0; i < plan.pageSize(); i++) {
                expected.add(FlakyHandlerService.externalId(page, i));
            }
        }
        for (UUID run : acceptedManualRuns) {
            if (!"failed".equals(runStatuses.get(run))) {
                Set<String> missing = new HashSet<>(expected);
                missing.removeAll(fetched.getOrDefault(run, Set.of()));
                lost += missing.size();
            }
        }
        var ledger = handler.ledger();
        long phantoms = records.itemIds("succeeded").stream()
                .filter(id -> ledger.getOrDefault(id, new FlakyHandlerService.Seen(0, 0)).succeeded() == 0).count();
        long repeats = ledger.values().stream().filter(seen -> seen.calls() > 1).count();
        long workedTwice = ledger.values().stream().filter(seen -> seen.succeeded() > 1).count();
        FlakyHandlerService.Tally tally = handler.tally();
        count(OUTAGE_CALLS, tally.inOutage());
        count(FLAPPED_CALLS, tally.flapped());
        count(HUNG_CALLS, tally.hung());
        Map<String, Long> faultCounts = new LinkedHashMap<>();
        faults.forEach((kind, count) -> faultCounts.put(kind, count.sum()));
        long manualItems = (long) acceptedManualRuns.size() * plan.pagesPerRun() * plan.pageSize();
        return new Figures(plan.tenants(), manualItems + acceptedWebhookItems.size() + acceptedIngestItems.size(),
                acceptedWebhookItems.size(), acceptedIngestItems.size(), manualItems, webhookRuns.intValue(), acceptedManualRuns.size(),
                new TreeMap<>(standing.itemsByStatus()), new TreeMap<>(standing.runsByStatus()), faultCounts, clientRetries.sum(),
                refused.sum(), lost, standing.openItems(), standing.deadWithoutDlqAt(), standing.openRuns(), records.markedSucceededTwice(),
                records.deliveriesMadeTwice(), phantoms, repeats, workedTwice, took, afterLastFault);
    }

    /** Returns once this share of the {@code total} requests has been accepted (or given up on). */
    private void whenAccepted(double share, int total) {
        while (answered.sum() < Math.ceil(share * total)) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private void count(String kind, long n) {
        faults.get(kind).add(n);
    }

    private void progress(long started, String what) {
        log.printf("  %5.1f s  %s%n", (System.nanoTime() - started) / 1e9, what);
    }

    private static void join(Future<?> task, String what) {
        try {
            task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(what + " failed: " + e.getCause(), e.getCause());
        }
    }

    static String tenant(int t) {
        return String.format("%s%02d", TENANT_PREFIX, t);
    }

    static String integration(int t) {
        return INTEGRATIONS.get(t % INTEGRATIONS.size());
    }
}
