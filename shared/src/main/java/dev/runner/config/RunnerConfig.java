package dev.runner.config;

import dev.runner.redis.RedisMode;
import dev.runner.security.Cidr;
import dev.runner.security.WebhookScheme;
import dev.runner.trigger.Trigger;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the functions read from their environment, parsed and checked once per cold start.
 * The same {@code RUNNER_*} variables configure AWS (set from template Parameters) and the local
 * runtime; each has a default (docs/configuration.md). A bad value fails the start with a message naming the
 * variable, never silently.
 */
public record RunnerConfig(
        Database database,
        /* redis:// or rediss:// (TLS); in cluster mode, seeds may be listed with commas. No password in it in AWS: AUTH comes from a secret. */
        String redisUrl,
        /* Standalone or cluster, said, not guessed from the URL (ElastiCache Serverless and cluster-mode groups are cluster). */
        RedisMode redisMode,
        /* PEM certificates trusted for rediss:// instead of the JDK's roots (a private CA, e.g. self-hosted Valkey); null = the JDK's. */
        Path redisTrustedCertificates,
        /* Prefix of every Redis key, so stacks (and tests) can share one Redis. */
        String redisPrefix,
        /* SQS endpoint override (ElasticMQ, LocalStack); null = the AWS default for the region. */
        String sqsEndpoint,
        /* Secrets Manager endpoint override (the local runtime); null = the AWS default for the region. */
        String secretsEndpoint,
        String awsRegion,
        /* From the environment Lambda sets; null = the SDK's default chain (under SnapStart, credentialsEndpoint). */
        AwsCredentials awsCredentials,
        /* Lambda's container credentials endpoint (SnapStart functions get it instead of keys); null = none. */
        CredentialsEndpoint credentialsEndpoint,
        Queues queues,
        /* Secrets Manager secret (name or ARN) by role; a role without one is given by value below, or not at all. */
        Map<SecretRole, String> secrets,
        /* Admin bearer key of the management API by value (tests, development; AWS reads it from its secret); null = from the secret, or none (every call is 401). */
        String apiKey,
        /* False when only IAM principals verified by API Gateway may call the management API (ManagementAuth iam). */
        boolean managementBearerKeys,
        /* RUNNER_MANAGEMENT_IAM_PRINCIPALS: the IAM principals allowed into the management API, each =admin or =tenant:<id> (api.IamPrincipals); empty = none. */
        String managementIamPrincipals,
        /* HMAC key of the handler calls by value (tests, development); null = from its secret (a function that calls handlers fails its start without either). */
        String handlerSigningSecret,
        /* RUNNER_HANDLER_ALLOWED_NETWORKS: where handlers may be besides public https addresses (HandlerUrlPolicy); default none. */
        List<Cidr> handlerAllowedNetworks,
        Retry retry,
        Breaker breaker,
        TenantLimit tenantLimit,
        Duration typesCacheTtl,
        Webhooks webhooks,
        /* Run worker: continue in a new message when less than this is left of the invocation. */
        Duration runTimeReserve,
        /* Claimed items whose worker went silent this long may be claimed again. */
        Duration itemClaimLease,
        int databasePoolSize,
        Sweeps sweeps,
        /* How long an item worker waits, in its invocation, for a concurrency lease expected back soon, instead of deferring the batch. */
        Duration laneWait,
        /* How long POST /runs remembers an Idempotency-Key per tenant (Stripe keeps keys 24 hours). */
        Duration runIdempotencyWindow,
        Retention retention,
        /* Most items in one items-tier message (docs/data-model.md, queue messages); 1 sends one item per message. */
        int itemsPerMessage,
        Callbacks callbacks) {

    /**
     * The items' callback URLs (docs/handler-contract.md, callbacks).
     *
     * @param baseUrl RUNNER_CALLBACK_BASE_URL, where {@code /callbacks/{token}} is served from outside (the HTTP API's
     *                address); null = item calls carry no callbackUrl, and a pending answer is a permanent failure
     * @param secret  RUNNER_CALLBACK_SECRET, the key the URLs are signed with, by value (tests, development); null = from
     *                its secret (RUNNER_CALLBACK_KEY_SECRET)
     */
    public record Callbacks(String baseUrl, String secret) {
        @Override
        public String toString() {
            return "Callbacks[baseUrl=" + baseUrl + "]";
        }
    }

    public RunnerConfig {
        secrets = Map.copyOf(secrets);
    }

    /** The secret (name or ARN) holding a role's value; null when none is named. */
    public String secret(SecretRole role) {
        return secrets.get(role);
    }

    /** Everything but the secrets (API key, signing secret, passwords, credentials in URLs); secret names are not secret. */
    @Override
    public String toString() {
        return "RunnerConfig[database=" + database + ", redisUrl=" + redisUrl.replaceAll("//[^@/]*@", "//***@")
                + ", redisMode=" + redisMode + ", redisTrustedCertificates=" + redisTrustedCertificates + ", redisPrefix=" + redisPrefix + ", sqsEndpoint=" + sqsEndpoint
                + ", secretsEndpoint=" + secretsEndpoint + ", awsRegion=" + awsRegion + ", queues=" + queues
                + ", secrets=" + secrets + ", apiKey=" + (apiKey == null ? "unset" : "***") + ", managementBearerKeys=" + managementBearerKeys
                + ", managementIamPrincipals=" + managementIamPrincipals + ", handlerSigningSecret=***"
                + ", handlerAllowedNetworks=" + handlerAllowedNetworks + ", retry=" + retry + ", breaker=" + breaker + ", tenantLimit=" + tenantLimit + ", typesCacheTtl=" + typesCacheTtl
                + ", webhooks=" + webhooks + ", runTimeReserve=" + runTimeReserve + ", itemClaimLease=" + itemClaimLease
                + ", databasePoolSize=" + databasePoolSize + ", sweeps=" + sweeps + ", laneWait=" + laneWait
                + ", runIdempotencyWindow=" + runIdempotencyWindow + ", retention=" + retention + ", itemsPerMessage=" + itemsPerMessage + "]";
    }

    public record Database(String jdbcUrl, String user, String password) {
        @Override
        public String toString() {
            return "Database[jdbcUrl=" + jdbcUrl + ", user=" + user + ", password=***]";
        }
    }

    public record AwsCredentials(String accessKeyId, String secretAccessKey, String sessionToken) {
        @Override
        public String toString() {
            return "AwsCredentials[accessKeyId=" + accessKeyId + ", secretAccessKey=***, sessionToken=***]";
        }
    }

    /**
     * Where the container credentials are read ({@code AWS_CONTAINER_CREDENTIALS_FULL_URI}, or
     * {@code _RELATIVE_URI} under ECS's address), with the token the endpoint wants: given, or read
     * from its file at each read (the file may be rewritten).
     */
    public record CredentialsEndpoint(String uri, String token, String tokenFile) {

        static final String ECS_ADDRESS = "http://169.254.170.2";

        /** The {@code Authorization} header's value; null when none is set. */
        public String authorization() {
            if (token != null) {
                return token;
            }
            if (tokenFile == null) {
                return null;
            }
            try {
                return Files.readString(Path.of(tokenFile)).strip();
            } catch (IOException e) {
                throw new IllegalStateException("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE " + tokenFile + " unreadable: " + e.getMessage(), e);
            }
        }

        @Override
        public String toString() {
            return "CredentialsEndpoint[" + uri + ", token=" + (token == null && tokenFile == null ? "none" : "***") + "]";
        }
    }

    /** Queue URLs by role. */
    public record Queues(Map<Trigger, String> runs, Map<Trigger, String> items,
                         String ingest, String runsDlq, String itemsDlq, String ingestDlq) {

        /** The items tier of a trigger. */
        public String items(Trigger trigger) {
            return items.get(trigger);
        }

        /** The runs tier of a trigger: only manual and scheduled runs fetch. */
        public String runs(Trigger trigger) {
            String url = runs.get(trigger);
            if (url == null) {
                throw new IllegalArgumentException("no runs queue for trigger " + trigger.wireName());
            }
            return url;
        }

        /** The URL of a role's queue. */
        public String url(QueueRole role) {
            return switch (role) {
                case RUNS_MANUAL -> runs(Trigger.MANUAL);
                case RUNS_SCHEDULE -> runs(Trigger.SCHEDULE);
                case ITEMS_WEBHOOK -> items(Trigger.WEBHOOK);
                case ITEMS_MANUAL -> items(Trigger.MANUAL);
                case ITEMS_QUEUE -> items(Trigger.QUEUE);
                case ITEMS_SCHEDULE -> items(Trigger.SCHEDULE);
                case INGEST -> ingest;
                case RUNS_DLQ -> runsDlq;
                case ITEMS_DLQ -> itemsDlq;
                case INGEST_DLQ -> ingestDlq;
            };
        }
    }

    /** Retry n waits base·2^(n-1); after maxAttempts the item goes to the DLQ. */
    public record Retry(int maxAttempts, Duration backoffBase) {
        public Duration backoff(int failedAttempt) {
            long millis = backoffBase.toMillis() << Math.min(Math.max(failedAttempt - 1, 0), 20);
            return Duration.ofMillis(millis);
        }
    }

    public record Breaker(int failureThreshold, Duration openFor, int halfOpenSuccesses) {}

    /**
     * @param backlogHorizon how far ahead a tenant's slots are reserved (RUNNER_TENANT_BACKLOG_HORIZON_S): an item whose
     *                       slot would lie further ahead waits in Postgres until the scheduler releases it; at most SQS's
     *                       longest delay (15 minutes), so no item goes round through SQS while it waits
     */
    public record TenantLimit(int perMinute, Duration shortestDeferral, Duration backlogHorizon) {

        /** The longest horizon: SQS delays a message 15 minutes at most. */
        public static final Duration LONGEST_HORIZON = Duration.ofMinutes(15);
        public static final Duration DEFAULT_HORIZON = Duration.ofMinutes(5);

        public TenantLimit(int perMinute, Duration shortestDeferral) {
            this(perMinute, shortestDeferral, DEFAULT_HORIZON);
        }

        public TenantLimit {
            if (backlogHorizon.compareTo(Duration.ofMinutes(2)) < 0 || backlogHorizon.compareTo(LONGEST_HORIZON) > 0) {
                throw new IllegalArgumentException("RUNNER_TENANT_BACKLOG_HORIZON_S must be 120..900 (longer than the scheduler's"
                        + " minute, at most SQS's longest delay): " + backlogHorizon.toSeconds());
            }
        }
    }

    /**
     * @param dedupWindow           a delivery seen within it is not processed again (at least the signature tolerance)
     * @param untimedDeliveryWindow how long the delivery id of a scheme whose signature carries no timestamp is kept: a
     *                              capture of it verifies forever, so it is remembered as long as its run (RUNNER_RETAIN_RUNS)
     * @param maxItemsPerDelivery   the most items one webhook body or ingest message may carry (RUNNER_MAX_ITEMS_PER_DELIVERY)
     */
    public record Webhooks(int maxBodyBytes, Duration signatureTolerance, Duration dedupWindow, Duration untimedDeliveryWindow,
                           int maxItemsPerDelivery) {

        /** How long a delivery id verified under {@code scheme} is remembered. */
        public Duration deliveryWindow(WebhookScheme scheme) {
            return scheme.signsTime() ? dedupWindow : untimedDeliveryWindow;
        }
    }

    /**
     * How long what grows with traffic is kept, past its end.
     *
     * @param runs finished runs and their items (RUNNER_RETAIN_RUNS); an open run is kept whatever its age, and so
     *             is the delivery id of a webhook whose signature carries no timestamp (a capture of it verifies forever)
     * @param dead dead items (past their run's retention too) and dead letters (RUNNER_RETAIN_DEAD)
     */
    public record Retention(Duration runs, Duration dead) {}

    /**
     * The scheduler's sweeps for work whose message was lost between a commit and a send.
     *
     * @param itemsOverdue     an item whose message is this late is re-sent (longer than SQS's 15-minute longest delay)
     * @param runsOverdue      a run still queued this long has its RunJob re-sent
     * @param completionQuiet  a run still running this long after its last item ended is completed by the sweep
     * @param unsent           a message committed work still owes this long after its commit (or the sweep's last try)
     *                         is sent by the sweep, however busy its tier
     * @param bulkPageSize     items a bulk action (redrive, cancel, resume, enable) takes per page, each one transaction
     * @param bulkBudget       how much of a tick the pages of bulk actions may take
     */
    public record Sweeps(Duration itemsOverdue, Duration runsOverdue, Duration completionQuiet, Duration unsent, int bulkPageSize,
                         Duration bulkBudget) {}

    public static RunnerConfig fromEnvironment() {
        return from(System.getenv());
    }

    public static RunnerConfig from(Map<String, String> env) {
        var read = new EnvironmentReader(env);
        Map<Trigger, String> runs = new EnumMap<>(Trigger.class);
        runs.put(Trigger.MANUAL, read.required(QueueRole.RUNS_MANUAL.variable()));
        runs.put(Trigger.SCHEDULE, read.required(QueueRole.RUNS_SCHEDULE.variable()));
        Map<Trigger, String> items = new EnumMap<>(Trigger.class);
        for (Trigger trigger : Trigger.values()) {
            items.put(trigger, read.required(QueueRole.items(trigger).variable()));
        }
        var queues = new Queues(runs, items,
                read.required(QueueRole.INGEST.variable()),
                read.required(QueueRole.RUNS_DLQ.variable()),
                read.required(QueueRole.ITEMS_DLQ.variable()),
                read.required(QueueRole.INGEST_DLQ.variable()));
        Map<SecretRole, String> secrets = new EnumMap<>(SecretRole.class);
        for (SecretRole role : SecretRole.values()) {
            String id = read.optional(role.variable(), null);
            if (id != null) {
                secrets.put(role, id);
            }
        }
        read.notBoth(SecretRole.DATABASE, "RUNNER_DATABASE_USER", "RUNNER_DATABASE_PASSWORD");
        read.notBoth(SecretRole.API_KEY, "RUNNER_API_KEY");
        read.notBoth(SecretRole.HANDLER_SIGNING_KEY, "RUNNER_HANDLER_SIGNING_SECRET");
        read.notBoth(SecretRole.CALLBACK_KEY, "RUNNER_CALLBACK_SECRET");
        String redisUrl = read.required("RUNNER_REDIS_URL");
        RedisMode redisMode = read.redisMode();
        if (!redisUrl.startsWith("redis://") && !redisUrl.startsWith("rediss://")) {
            throw new IllegalStateException("RUNNER_REDIS_URL must start with redis:// or rediss:// (TLS); cluster mode is"
                    + " RUNNER_REDIS_MODE=cluster: " + redisUrl.replaceAll("//[^@/]*@", "//***@"));
        }
        Duration tolerance = Duration.ofSeconds(read.positiveInt("RUNNER_WEBHOOK_TOLERANCE_S", 300));
        Duration dedupWindow = Duration.ofSeconds(read.positiveInt("RUNNER_WEBHOOK_DEDUP_S", 86400));
        if (dedupWindow.compareTo(tolerance) < 0) {
            // A delivery forgotten while its signature still verifies could be replayed and processed again.
            throw new IllegalStateException("RUNNER_WEBHOOK_DEDUP_S (" + dedupWindow.toSeconds()
                    + ") must be at least RUNNER_WEBHOOK_TOLERANCE_S (" + tolerance.toSeconds() + ")");
        }
        var retention = new Retention(read.duration("RUNNER_RETAIN_RUNS", Duration.ofDays(30)),
                read.duration("RUNNER_RETAIN_DEAD", Duration.ofDays(90)));
        return new RunnerConfig(
                new Database(read.required("RUNNER_DATABASE_URL"),
                        read.optional("RUNNER_DATABASE_USER", null),
                        read.optional("RUNNER_DATABASE_PASSWORD", null)),
                redisUrl,
                redisMode,
                read.trustedCertificates("RUNNER_REDIS_CA_FILE", redisUrl),
                read.optional("RUNNER_REDIS_PREFIX", "runner"),
                read.optional("RUNNER_SQS_ENDPOINT", null),
                read.optional("RUNNER_SECRETS_ENDPOINT", null),
                read.optional("AWS_REGION", "us-east-1"),
                read.optional("AWS_ACCESS_KEY_ID", null) == null ? null
                        : new AwsCredentials(read.required("AWS_ACCESS_KEY_ID"), read.required("AWS_SECRET_ACCESS_KEY"),
                                read.optional("AWS_SESSION_TOKEN", null)),
                read.credentialsEndpoint(),
                queues,
                secrets,
                read.optional("RUNNER_API_KEY", null),
                read.managementBearerKeys(),
                read.optional("RUNNER_MANAGEMENT_IAM_PRINCIPALS", ""),
                read.optional("RUNNER_HANDLER_SIGNING_SECRET", null),
                read.networks("RUNNER_HANDLER_ALLOWED_NETWORKS"),
                new Retry(read.positiveInt("RUNNER_MAX_ATTEMPTS", 3),
                        Duration.ofMillis(read.positiveInt("RUNNER_BACKOFF_BASE_MS", 5000))),
                new Breaker(read.positiveInt("RUNNER_BREAKER_FAILURE_THRESHOLD", 5),
                        Duration.ofMillis(read.positiveInt("RUNNER_BREAKER_OPEN_MS", 30000)),
                        read.positiveInt("RUNNER_BREAKER_HALF_OPEN_SUCCESSES", 2)),
                new TenantLimit(read.positiveInt("RUNNER_TENANT_LIMIT_PER_MINUTE", 1000),
                        Duration.ofMillis(read.positiveInt("RUNNER_TENANT_DEFER_MS", 5000)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_TENANT_BACKLOG_HORIZON_S", 300))),
                Duration.ofSeconds(read.positiveInt("RUNNER_TYPES_CACHE_TTL_S", 60)),
                new Webhooks(read.positiveInt("RUNNER_WEBHOOK_MAX_BYTES", 1024 * 1024),
                        tolerance, dedupWindow, max(dedupWindow, retention.runs()),
                        read.positiveInt("RUNNER_MAX_ITEMS_PER_DELIVERY", 1000)),
                Duration.ofMillis(read.positiveInt("RUNNER_RUN_TIME_RESERVE_MS", 10000)),
                Duration.ofMillis(read.positiveInt("RUNNER_ITEM_CLAIM_LEASE_MS", 120000)),
                read.positiveInt("RUNNER_DATABASE_POOL_SIZE", 4),
                new Sweeps(Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_ITEMS_OVERDUE_S", 1200)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_RUNS_OVERDUE_S", 600)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_COMPLETION_QUIET_S", 60)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_UNSENT_S", 60)),
                        read.positiveInt("RUNNER_BULK_PAGE_SIZE", 1000),
                        Duration.ofMillis(read.positiveInt("RUNNER_BULK_BUDGET_MS", 8000))),
                Duration.ofMillis(read.positiveInt("RUNNER_LANE_WAIT_MS", 2000)),
                Duration.ofSeconds(read.positiveInt("RUNNER_RUN_IDEMPOTENCY_S", 86400)),
                retention,
                read.positiveInt("RUNNER_ITEMS_PER_MESSAGE", 100),
                new Callbacks(read.optional("RUNNER_CALLBACK_BASE_URL", null), read.optional("RUNNER_CALLBACK_SECRET", null)));
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
