package dev.runner.local.schedule;

import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.local.lambda.LocalFunction;
import dev.runner.local.template.EventSource;
import dev.runner.local.template.TemplateException;
import dev.runner.schedule.ScheduleExpression;
import org.joda.time.DateTime;
import org.joda.time.DateTimeZone;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Fires the template's schedules as EventBridge does: a {@link ScheduledEvent} per firing, the
 * function invoked asynchronously so a slow run never delays the next tick. Expressions are
 * evaluated by the core's {@link ScheduleExpression}, the same code that evaluates tenants'
 * schedules. A tick override (for demos and tests) replaces every expression's period.
 */
public final class ScheduleTicker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ScheduleTicker.class);

    private final Clock clock;
    private final Optional<Duration> tickOverride;
    private final String region;
    private final String accountId;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("schedule-timer").factory());
    private final ExecutorService invocations;

    /** @param threads the threads invocations run on (platform threads, so their CPU can be measured) */
    public ScheduleTicker(Clock clock, Optional<Duration> tickOverride, String region, String accountId, ThreadFactory threads) {
        this.invocations = Executors.newCachedThreadPool(threads);
        this.clock = clock;
        this.tickOverride = tickOverride;
        this.region = region;
        this.accountId = accountId;
    }

    /** Arms a schedule; an expression EventBridge would reject fails here, naming the event. */
    public void add(EventSource.Schedule schedule, LocalFunction function) {
        ScheduleExpression expression;
        try {
            expression = ScheduleExpression.parse(schedule.expression());
        } catch (IllegalArgumentException e) {
            throw new TemplateException(schedule.name() + ": " + e.getMessage());
        }
        if (schedule.input() != null) {
            LOG.warn("{}: constant Input is not passed locally; the function gets the scheduled event", schedule.name());
        }
        String ruleArn = "arn:aws:events:" + region + ":" + accountId + ":rule/" + schedule.name().replace('.', '-');
        Function<Instant, Optional<Instant>> next = tickOverride.isPresent()
                ? after -> Optional.of(after.plus(tickOverride.get()))
                : expression::nextAfter;
        arm(next, clock.instant(), function, ruleArn);
    }

    private void arm(Function<Instant, Optional<Instant>> next, Instant after, LocalFunction function, String ruleArn) {
        next.apply(after).ifPresent(at -> {
            long delay = Math.max(0, Duration.between(clock.instant(), at).toMillis());
            timer.schedule(() -> {
                invocations.submit(() -> fire(function, ruleArn, at));
                arm(next, at, function, ruleArn);
            }, delay, TimeUnit.MILLISECONDS);
        });
    }

    private void fire(LocalFunction function, String ruleArn, Instant at) {
        var event = new ScheduledEvent()
                .withVersion("0")
                .withId(UUID.randomUUID().toString())
                .withDetailType("Scheduled Event")
                .withSource("aws.events")
                .withAccount(accountId)
                .withRegion(region)
                .withTime(new DateTime(at.toEpochMilli(), DateTimeZone.UTC))
                .withResources(List.of(ruleArn))
                .withDetail(Map.of());
        // EventBridge ignores the answer, whatever JSON it is.
        if (function.invoke(event, Object.class) instanceof LocalFunction.Outcome.Failed failed) {
            LOG.error("{} failed on its schedule: {} {}", function.logicalId(), failed.errorType(), failed.message(), failed.cause());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        invocations.shutdown();
        try {
            invocations.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
