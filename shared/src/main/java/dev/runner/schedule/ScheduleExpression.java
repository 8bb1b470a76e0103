package dev.runner.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * A schedule in EventBridge's own forms, {@code rate(value unit)} or
 * {@code cron(minutes hours day-of-month month day-of-week year)}, evaluated in UTC as
 * EventBridge does. Rules followed:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html
 */
public sealed interface ScheduleExpression permits ScheduleExpression.Rate, CronExpression {

    /**
     * Parses {@code rate(N unit)} or {@code cron(6 fields)}.
     *
     * @throws IllegalArgumentException naming the expression and what is wrong with it
     */
    static ScheduleExpression parse(String expression) {
        Objects.requireNonNull(expression, "expression");
        String trimmed = expression.strip();
        if (trimmed.startsWith("rate(") && trimmed.endsWith(")")) {
            return Rate.parse(trimmed);
        }
        if (trimmed.startsWith("cron(") && trimmed.endsWith(")")) {
            return CronExpression.parse(trimmed);
        }
        throw new IllegalArgumentException(
                expression + ": expects rate(value unit) or cron(minutes hours day-of-month month day-of-week year)");
    }

    /**
     * The first fire instant strictly after {@code after}; empty when the schedule never fires
     * again (a cron whose years are all past).
     */
    Optional<Instant> nextAfter(Instant after);

    /** The expression in normal form: single spaces, upper-case names. */
    String text();

    /**
     * {@code rate(value unit)}: fires every {@code value} units. EventBridge's granularity is a
     * minute, so the next fire is {@code after + period} truncated to the minute.
     */
    record Rate(int value, ChronoUnit unit) implements ScheduleExpression {

        public Rate {
            if (value < 1) {
                throw new IllegalArgumentException("rate value < 1: " + value);
            }
            if (unit != ChronoUnit.MINUTES && unit != ChronoUnit.HOURS && unit != ChronoUnit.DAYS) {
                throw new IllegalArgumentException("rate unit must be MINUTES, HOURS or DAYS: " + unit);
            }
        }

        static Rate parse(String expression) {
            String[] parts = expression.substring("rate(".length(), expression.length() - 1).strip().split("\\s+");
            if (parts.length != 2) {
                throw new IllegalArgumentException(expression + ": expects rate(value unit), e.g. rate(5 minutes)");
            }
            int value = parseValue(expression, parts[0]);
            // EventBridge rejects "rate(5 minute)" and "rate(1 minutes)": the unit's number must agree.
            String unitWord = parts[1];
            String singular = unitWord.endsWith("s") ? unitWord.substring(0, unitWord.length() - 1) : unitWord;
            ChronoUnit unit = switch (singular) {
                case "minute" -> ChronoUnit.MINUTES;
                case "hour" -> ChronoUnit.HOURS;
                case "day" -> ChronoUnit.DAYS;
                default -> throw new IllegalArgumentException(
                        expression + ": unit must be minute(s), hour(s) or day(s), got " + unitWord);
            };
            boolean plural = !singular.equals(unitWord);
            if (value == 1 && plural) {
                throw new IllegalArgumentException(expression + ": value 1 takes the singular unit " + singular);
            }
            if (value > 1 && !plural) {
                throw new IllegalArgumentException(expression + ": value " + value + " takes the plural unit " + singular + "s");
            }
            return new Rate(value, unit);
        }

        private static int parseValue(String expression, String token) {
            if (!token.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException(expression + ": value must be a positive integer, got " + token);
            }
            int value;
            try {
                value = Integer.parseInt(token);
            } catch (NumberFormatException tooLarge) {
                throw new IllegalArgumentException(expression + ": value is too large: " + token);
            }
            if (value < 1) {
                throw new IllegalArgumentException(expression + ": value must be ≥ 1");
            }
            return value;
        }

        public Duration period() {
            return unit.getDuration().multipliedBy(value);
        }

        @Override
        public Optional<Instant> nextAfter(Instant after) {
            // The period is at least a minute, so truncating after + period stays strictly after `after`.
            return Optional.of(after.truncatedTo(ChronoUnit.MINUTES).plus(period()));
        }

        @Override
        public String text() {
            String word = switch (unit) {
                case MINUTES -> "minute";
                case HOURS -> "hour";
                default -> "day";
            };
            return "rate(" + value + " " + word + (value == 1 ? "" : "s") + ")";
        }
    }
}
