package dev.runner.guard;

import dev.runner.metrics.Metrics;
import dev.runner.redis.Pipeline;
import dev.runner.redis.Redis;
import dev.runner.redis.RedisUnavailableException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * How the guard's parts talk to Redis: pipelines that carry the give-backs waiting for the next
 * round trip, and the fail-open policy (count it, log an outage as a warning and a bug as an
 * error with its stack). Shared by {@link Guard}, {@link Breaker}, {@link HandlerLimits} and
 * {@link TenantWindow}, so every round trip of one Guard takes the give-backs along.
 */
final class GuardRoundTrips {

    private static final Logger log = LoggerFactory.getLogger(Guard.class);

    private final Redis redis;
    private final Metrics metrics;
    /** Give-backs for the next round trip (see {@link Guard}). */
    private final ConcurrentLinkedQueue<Redis.Call> giveBacks = new ConcurrentLinkedQueue<>();

    GuardRoundTrips(Redis redis, Metrics metrics) {
        this.redis = Objects.requireNonNull(redis, "redis");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    Redis redis() {
        return redis;
    }

    Metrics metrics() {
        return metrics;
    }

    /** Queues a call for the next round trip this Guard makes. */
    void giveBack(Redis.Call call) {
        giveBacks.add(call);
    }

    /** A pipeline that starts with every give-back waiting. */
    Pipeline pipelineWithGiveBacks() {
        Pipeline pipeline = new Pipeline();
        for (Redis.Call call; (call = giveBacks.poll()) != null; ) {
            pipeline.send(call);
        }
        return pipeline;
    }

    /** Runs the pipeline; on failure fails open and says why (empty: it ran). */
    Optional<FailOpen> run(Pipeline pipeline, String operation, String consequence) {
        try {
            pipeline.run(redis);
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of(failOpen(e, operation, consequence));
        }
    }

    /** Sends the waiting give-backs now, in a round trip of their own. */
    void flushGiveBacks(String consequence) {
        Pipeline pipeline = pipelineWithGiveBacks();
        if (!pipeline.isEmpty()) {
            run(pipeline, "give-back", consequence);
        }
    }

    /** Counts a fail-open and logs why: an outage as a warning, a bug as an error with its stack. */
    FailOpen failOpen(RuntimeException e, String operation, String consequence) {
        metrics.redisFailOpen(operation);
        if (e instanceof RedisUnavailableException) {
            log.warn("Redis unavailable, {} (fail-open): {}", consequence, e.toString());
            return FailOpen.REDIS_UNAVAILABLE;
        }
        log.error("guard script failed (a bug, not an outage), {} (fail-open)", consequence, e);
        return FailOpen.SCRIPT_FAILED;
    }
}
