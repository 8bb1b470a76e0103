package dev.runner.testing;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A partner API that publishes its limits only in its answers, as real ones do: a call beyond them
 * is answered {@code 429} with {@code Retry-After}. Its limits hold per scope, the whole partner or
 * each tenant: at most {@code atOnce} calls in progress, at most {@code perMinute} calls served in
 * any minute. A served call takes {@code callTime}. It records every answer with its tenant and
 * time, for the share of its capacity a client used and the share of calls it refused.
 */
public final class LimitedPartner {

    /** One answer: to whom, when (System.nanoTime), served or refused. */
    public record Answer(String tenantId, long atNanos, boolean served) {}

    private final int atOnce;
    private final int perMinute;
    private final boolean perTenant;
    private final Duration callTime;
    private final int retryAfterSeconds;
    private final Map<String, Integer> inProgress = new HashMap<>();
    private final Map<String, Deque<Long>> servedLastMinute = new HashMap<>();
    private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();

    private LimitedPartner(int atOnce, int perMinute, boolean perTenant, Duration callTime, int retryAfterSeconds) {
        this.atOnce = atOnce;
        this.perMinute = perMinute;
        this.perTenant = perTenant;
        this.callTime = callTime;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    /** At most {@code calls} calls at once over all tenants, each taking {@code callTime}; beyond: 429 Retry-After {@code retryAfterSeconds}. */
    public static LimitedPartner atOnce(int calls, Duration callTime, int retryAfterSeconds) {
        return new LimitedPartner(calls, 0, false, callTime, retryAfterSeconds);
    }

    /** At most {@code calls} calls a minute per tenant; beyond: 429 with Retry-After until the tenant's oldest call leaves its minute. */
    public static LimitedPartner perTenantPerMinute(int calls, Duration callTime) {
        return new LimitedPartner(0, calls, true, callTime, 1);
    }

    /** The answer to a /process call of this item (blocks for the call's time when it is served). */
    public FakeHandler.Reply process(JsonNode item) {
        String tenant = item.path("tenantId").asText();
        String scope = perTenant ? tenant : "";
        long now = System.nanoTime();
        String refusal;
        synchronized (this) {
            refusal = refusal(scope, now);
            if (refusal == null) {
                inProgress.merge(scope, 1, Integer::sum);
                servedLastMinute.computeIfAbsent(scope, s -> new ArrayDeque<>()).addLast(now);
            }
        }
        answers.add(new Answer(tenant, now, refusal == null));
        if (refusal != null) {
            return new FakeHandler.Reply(429, refusal);
        }
        try {
            LockSupport.parkNanos(callTime.toNanos());
            return FakeHandler.Reply.OK;
        } finally {
            synchronized (this) {
                inProgress.merge(scope, -1, Integer::sum);
            }
        }
    }

    /** Null when the call may be served, else the Retry-After to answer with. */
    private String refusal(String scope, long now) {
        if (atOnce > 0 && inProgress.getOrDefault(scope, 0) >= atOnce) {
            return Integer.toString(retryAfterSeconds);
        }
        if (perMinute > 0) {
            Deque<Long> served = servedLastMinute.computeIfAbsent(scope, s -> new ArrayDeque<>());
            long minute = Duration.ofMinutes(1).toNanos();
            while (!served.isEmpty() && served.peekFirst() <= now - minute) {
                served.removeFirst();
            }
            if (served.size() >= perMinute) {
                long freesIn = served.peekFirst() + minute - now;
                return Long.toString(Math.max(1, Math.ceilDiv(freesIn, 1_000_000_000L)));
            }
        }
        return null;
    }

    public List<Answer> answers() {
        return List.copyOf(answers);
    }
}
