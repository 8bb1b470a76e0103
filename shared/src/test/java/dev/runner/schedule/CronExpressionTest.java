package dev.runner.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** nextAfter's field-by-field walk against a minute-by-minute scan of firesAt. */
class CronExpressionTest {

    private static final int SCAN_DAYS = 400;

    private static LocalDateTime firstCandidate(Instant after) {
        return LocalDateTime.ofInstant(after, ZoneOffset.UTC).truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
    }

    /** Where the scan from {@code after} stops looking (exclusive). */
    private static Instant scanEnd(Instant after) {
        return firstCandidate(after).plusDays(SCAN_DAYS).toInstant(ZoneOffset.UTC);
    }

    /** The slow, obvious answer: try every minute after {@code after} for SCAN_DAYS days. */
    private static Optional<Instant> scan(CronExpression cron, Instant after) {
        LocalDateTime end = firstCandidate(after).plusDays(SCAN_DAYS);
        for (LocalDateTime minute = firstCandidate(after); minute.isBefore(end); minute = minute.plusMinutes(1)) {
            if (cron.firesAt(minute)) {
                return Optional.of(minute.toInstant(ZoneOffset.UTC));
            }
        }
        return Optional.empty();
    }

    /** nextAfter limited to the scan's window, so the two answers are comparable. */
    private static Optional<Instant> walk(CronExpression cron, Instant after) {
        return cron.nextAfter(after).filter(fire -> fire.isBefore(scanEnd(after)));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "cron(0 10 * * ? *)",
        "cron(*/7 */5 * * ? *)",
        "cron(15,45 8-17 ? * MON-FRI *)",
        "cron(0 0 L * ? *)",
        "cron(30 23 LW * ? *)",
        "cron(0 12 15W * ? *)",
        "cron(0 12 1W * ? *)",
        "cron(0 12 31W * ? *)",
        "cron(59 23 ? * 6L *)",
        "cron(0 6 ? * 2#5 *)",
        "cron(0 0 29 2 ? *)",
        "cron(5 4 1/10 JAN,JUL ? *)",
        "cron(0 0 ? * L *)",
        "cron(0 0 1 1 ? 2026-2027)",
    })
    void walkAgreesWithMinuteScan(String expression) {
        CronExpression cron = (CronExpression) ScheduleExpression.parse(expression);
        SplittableRandom random = new SplittableRandom(expression.hashCode());
        Instant from = Instant.parse("2025-11-01T00:00:00Z");
        long span = Instant.parse("2028-03-01T00:00:00Z").getEpochSecond() - from.getEpochSecond();
        for (int i = 0; i < 20; i++) {
            Instant after = from.plusSeconds(random.nextLong(span));
            assertEquals(scan(cron, after), walk(cron, after), () -> expression + " after " + after);
            // Asked at a fire instant itself, the walk moves on to the following fire.
            cron.nextAfter(after).ifPresent(fire ->
                    assertEquals(scan(cron, fire), walk(cron, fire), () -> expression + " after its fire " + fire));
        }
    }
}
