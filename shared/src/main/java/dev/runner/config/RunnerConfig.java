package dev.runner.config;

import dev.runner.security.Cidr;
import dev.runner.trigger.Trigger;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the functions read from their environment, parsed and checked once per cold start.
 * The same {@code RUNNER_*} variables configure AWS (set from template Parameters) and the local
 * runtime; defaults are the seed's values. A bad value fails the start with a message naming the
 * variable, never silently.
 */
public record RunnerConfig(
        Database database,
        String redisUrl,
        /* Prefix of every Redis key, so stacks (and tests) can share one Redis. */
        String redisPrefix,
        /* SQS endpoint override (ElasticMQ, LocalStack); null = the AWS default for the region. */
        String sqsEndpoint,
        String awsRegion,
        /* From the environment Lambda sets; null = the SDK's default chain. */
        AwsCredentials awsCredentials,
        Queues queues,
        /* Bearer key of the management API; null disables the API (every call is 401). */
        String apiKey,
        /* False when only IAM principals verified by API Gateway may call the management API (ManagementAuth iam). */
        boolean managementBearerKeys,
        /* HMAC key Runner signs its handler calls with; required, so a missing one fails the start, not the first call. */
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
        Sweeps sweeps) {

    /** Everything but the secrets (API key, signing secret, passwords, credentials in URLs). */
    @Override
    public String toString() {
        return "RunnerConfig[database=" + database + ", redisUrl=" + redisUrl.replaceAll("//[^@/]*@", "//***@")
                + ", redisPrefix=" + redisPrefix + ", sqsEndpoint=" + sqsEndpoint + ", awsRegion=" + awsRegion
                + ", queues=" + queues + ", apiKey=" + (apiKey == null ? "unset" : "***") + ", managementBearerKeys=" + managementBearerKeys + ", handlerSigningSecret=***"
                + ", handlerAllowedNetworks=" + handlerAllowedNetworks + ", retry=" + retry + ", breaker=" + breaker + ", tenantLimit=" + tenantLimit + ", typesCacheTtl=" + typesCacheTtl
                + ", webhooks=" + webhooks + ", runTimeReserve=" + runTimeReserve + ", itemClaimLease=" + itemClaimLease
                + ", databasePoolSize=" + databasePoolSize + ", sweeps=" + sweeps + "]";
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
    }

    /** Retry n waits base·2^(n-1); after maxAttempts the item goes to the DLQ. */
    public record Retry(int maxAttempts, Duration backoffBase) {
        public Duration backoff(int failedAttempt) {
            long millis = backoffBase.toMillis() << Math.min(Math.max(failedAttempt - 1, 0), 20);
            return Duration.ofMillis(millis);
        }
    }

    public record Breaker(int failureThreshold, Duration openFor, int halfOpenSuccesses) {}

    public record TenantLimit(int perMinute, Duration shortestDeferral) {}

    public record Webhooks(int maxBodyBytes, Duration signatureTolerance, Duration dedupWindow) {}

    /**
     * The scheduler's sweeps for work whose message was lost between a commit and a send.
     *
     * @param itemsOverdue     an item whose message is this late is re-sent (longer than SQS's 15-minute longest delay)
     * @param runsOverdue      a run still queued this long has its RunJob re-sent
     * @param completionQuiet  a run still running this long after its last item ended is completed by the sweep
     */
    public record Sweeps(Duration itemsOverdue, Duration runsOverdue, Duration completionQuiet) {}

    public static RunnerConfig fromEnvironment() {
        return from(System.getenv());
    }

    public static RunnerConfig from(Map<String, String> env) {
        var read = new Reader(env);
        Map<Trigger, String> runs = new EnumMap<>(Trigger.class);
        runs.put(Trigger.MANUAL, read.required("RUNNER_QUEUE_RUNS_MANUAL"));
        runs.put(Trigger.SCHEDULE, read.required("RUNNER_QUEUE_RUNS_SCHEDULE"));
        Map<Trigger, String> items = new EnumMap<>(Trigger.class);
        items.put(Trigger.WEBHOOK, read.required("RUNNER_QUEUE_ITEMS_WEBHOOK"));
        items.put(Trigger.MANUAL, read.required("RUNNER_QUEUE_ITEMS_MANUAL"));
        items.put(Trigger.QUEUE, read.required("RUNNER_QUEUE_ITEMS_QUEUE"));
        items.put(Trigger.SCHEDULE, read.required("RUNNER_QUEUE_ITEMS_SCHEDULE"));
        var queues = new Queues(runs, items,
                read.required("RUNNER_QUEUE_INGEST"),
                read.required("RUNNER_QUEUE_RUNS_DLQ"),
                read.required("RUNNER_QUEUE_ITEMS_DLQ"),
                read.required("RUNNER_QUEUE_INGEST_DLQ"));
        return new RunnerConfig(
                new Database(read.required("RUNNER_DATABASE_URL"),
                        read.optional("RUNNER_DATABASE_USER", null),
                        read.optional("RUNNER_DATABASE_PASSWORD", null)),
                read.required("RUNNER_REDIS_URL"),
                read.optional("RUNNER_REDIS_PREFIX", "runner"),
                read.optional("RUNNER_SQS_ENDPOINT", null),
                read.optional("AWS_REGION", "us-east-1"),
                read.optional("AWS_ACCESS_KEY_ID", null) == null ? null
                        : new AwsCredentials(read.required("AWS_ACCESS_KEY_ID"), read.required("AWS_SECRET_ACCESS_KEY"),
                                read.optional("AWS_SESSION_TOKEN", null)),
                queues,
                read.optional("RUNNER_API_KEY", null),
                read.managementBearerKeys(),
                read.required("RUNNER_HANDLER_SIGNING_SECRET"),
                read.networks("RUNNER_HANDLER_ALLOWED_NETWORKS"),
                new Retry(read.positiveInt("RUNNER_MAX_ATTEMPTS", 3),
                        Duration.ofMillis(read.positiveInt("RUNNER_BACKOFF_BASE_MS", 5000))),
                new Breaker(read.positiveInt("RUNNER_BREAKER_FAILURE_THRESHOLD", 5),
                        Duration.ofMillis(read.positiveInt("RUNNER_BREAKER_OPEN_MS", 30000)),
                        read.positiveInt("RUNNER_BREAKER_HALF_OPEN_SUCCESSES", 2)),
                new TenantLimit(read.positiveInt("RUNNER_TENANT_LIMIT_PER_MINUTE", 1000),
                        Duration.ofMillis(read.positiveInt("RUNNER_TENANT_DEFER_MS", 5000))),
                Duration.ofSeconds(read.positiveInt("RUNNER_TYPES_CACHE_TTL_S", 60)),
                new Webhooks(read.positiveInt("RUNNER_WEBHOOK_MAX_BYTES", 1024 * 1024),
                        Duration.ofSeconds(read.positiveInt("RUNNER_WEBHOOK_TOLERANCE_S", 300)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_WEBHOOK_DEDUP_S", 86400))),
                Duration.ofMillis(read.positiveInt("RUNNER_RUN_TIME_RESERVE_MS", 10000)),
                Duration.ofMillis(read.positiveInt("RUNNER_ITEM_CLAIM_LEASE_MS", 120000)),
                read.positiveInt("RUNNER_DATABASE_POOL_SIZE", 4),
                new Sweeps(Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_ITEMS_OVERDUE_S", 1200)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_RUNS_OVERDUE_S", 600)),
                        Duration.ofSeconds(read.positiveInt("RUNNER_SWEEP_COMPLETION_QUIET_S", 60))));
    }

    /** Reads variables; blank counts as unset. */
    private record Reader(Map<String, String> env) {
        String optional(String name, String fallback) {
            String value = env.get(name);
            return value == null || value.isBlank() ? fallback : value.trim();
        }

        String required(String name) {
            String value = optional(name, null);
            if (value == null) {
                throw new IllegalStateException(name + " is not set");
            }
            return value;
        }

        /** A comma-separated CIDR list (IPv4 and IPv6); unset = none. */
        List<Cidr> networks(String name) {
            try {
                return Cidr.parseList(optional(name, null));
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException(name + " must be a comma-separated list of networks such as 10.0.0.0/8,fd00::/8: "
                        + e.getMessage());
            }
        }

        /** RUNNER_MANAGEMENT_AUTH: apiKey (default: bearer keys) or iam (SigV4 principals only). */
        boolean managementBearerKeys() {
            String mode = optional("RUNNER_MANAGEMENT_AUTH", "apiKey");
            return switch (mode) {
                case "apiKey" -> true;
                case "iam" -> false;
                default -> throw new IllegalStateException("RUNNER_MANAGEMENT_AUTH must be apiKey or iam: " + mode);
            };
        }

        int positiveInt(String name, int fallback) {
            String value = optional(name, null);
            if (value == null) {
                return fallback;
            }
            try {
                int parsed = Integer.parseInt(value);
                if (parsed <= 0) {
                    throw new IllegalStateException(name + " must be > 0: " + value);
                }
                return parsed;
            } catch (NumberFormatException e) {
                throw new IllegalStateException(name + " must be a whole number: " + value);
            }
        }
    }
}
