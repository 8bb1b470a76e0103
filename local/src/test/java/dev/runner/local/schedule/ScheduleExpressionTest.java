package dev.runner.local.schedule;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ScheduleExpressionTest {

    private static final Instant NOW = Instant.parse("2026-11-30T01:02:30Z"); // a Monday

    @Test
    void rateFiresOnePeriodLater() {
        assertEquals(NOW.plus(Duration.ofMinutes(1)), ScheduleExpression.parse("rate(1 minute)").next(NOW));
        assertEquals(NOW.plus(Duration.ofMinutes(15)), ScheduleExpression.parse("rate(15 minutes)").next(NOW));
        assertEquals(NOW.plus(Duration.ofDays(2)), ScheduleExpression.parse("rate(2 days)").next(NOW));
    }

    @Test
    void cronFiresOnTheNextMatchingMinuteInUtc() {
        assertEquals(Instant.parse("2026-11-30T01:05:00Z"), ScheduleExpression.parse("cron(0/5 * * * ? *)").next(NOW));
        assertEquals(Instant.parse("2026-11-30T10:15:00Z"), ScheduleExpression.parse("cron(15 10 * * ? *)").next(NOW));
        assertEquals(Instant.parse("2026-12-04T18:00:00Z"), ScheduleExpression.parse("cron(0 18 ? * FRI *)").next(NOW),
                "day-of-week by name");
        assertEquals(Instant.parse("2026-12-06T00:00:00Z"), ScheduleExpression.parse("cron(0 0 ? * 1 *)").next(NOW),
                "1 is Sunday");
        assertEquals(Instant.parse("2027-01-01T08:00:00Z"), ScheduleExpression.parse("cron(0 8 1 JAN ? *)").next(NOW));
        assertEquals(Instant.parse("2026-12-01T09:00:00Z"), ScheduleExpression.parse("cron(0 9-17 ? * MON-FRI *)")
                .next(Instant.parse("2026-11-30T17:30:00Z")));
    }

    @Test
    void rejectsWhatItCannotFire() {
        assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse("rate(0 minutes)"));
        assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse("rate(5 weeks)"));
        assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse("cron(0 12 * *)"));
        assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse("cron(0 12 L * ? *)"));
        assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse("every minute"));
    }
}
