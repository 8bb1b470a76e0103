package dev.runner.local.schedule;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An EventBridge schedule expression: {@code rate(N unit)} or {@code cron(min hour dom month dow year)}
 * in UTC (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html).
 * The cron forms {@code L}, {@code W} and {@code #} are not supported locally and are rejected.
 */
public sealed interface ScheduleExpression {

    /** The first firing strictly after {@code after}. */
    Instant next(Instant after);

    static ScheduleExpression parse(String expression) {
        String text = expression.trim();
        if (text.startsWith("rate(") && text.endsWith(")")) {
            return Rate.parse(text.substring(5, text.length() - 1));
        }
        if (text.startsWith("cron(") && text.endsWith(")")) {
            return Cron.parse(text.substring(5, text.length() - 1));
        }
        throw new IllegalArgumentException("not a schedule expression (rate(...) or cron(...)): " + expression);
    }

    /** Fires every {@code period}, the first time one period after start. */
    record Rate(Duration period) implements ScheduleExpression {
        private static final Pattern FORM = Pattern.compile("(\\d+)\\s+(minute|minutes|hour|hours|day|days)");

        static Rate parse(String body) {
            Matcher matcher = FORM.matcher(body.trim().toLowerCase(Locale.ROOT));
            if (!matcher.matches()) {
                throw new IllegalArgumentException("rate needs 'N minute(s)|hour(s)|day(s)': rate(" + body + ")");
            }
            long value = Long.parseLong(matcher.group(1));
            if (value < 1) {
                throw new IllegalArgumentException("rate value < 1: " + value);
            }
            ChronoUnit unit = switch (matcher.group(2)) {
                case "minute", "minutes" -> ChronoUnit.MINUTES;
                case "hour", "hours" -> ChronoUnit.HOURS;
                default -> ChronoUnit.DAYS;
            };
            return new Rate(Duration.of(value, unit));
        }

        @Override
        public Instant next(Instant after) {
            return after.plus(period);
        }
    }

    /** Six fields, each a set of allowed values; day-of-week 1 = Sunday as in EventBridge. */
    record Cron(BitSet minutes, BitSet hours, BitSet daysOfMonth, BitSet months, BitSet daysOfWeek, BitSet years,
                boolean anyDayOfMonth, boolean anyDayOfWeek) implements ScheduleExpression {

        private static final List<String> MONTHS = List.of("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC");
        private static final List<String> DAYS = List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT");

        static Cron parse(String body) {
            String[] fields = body.trim().split("\\s+");
            if (fields.length != 6) {
                throw new IllegalArgumentException("cron needs 6 fields (minutes hours day-of-month month day-of-week year): cron(" + body + ")");
            }
            for (String field : fields) {
                String withoutNames = field.toUpperCase(Locale.ROOT).replaceAll("[A-Z]{3}", "");
                if (withoutNames.matches(".*[LW#].*")) {
                    throw new IllegalArgumentException("cron L, W and # are not supported locally: cron(" + body + ")");
                }
            }
            boolean anyDom = fields[2].equals("?") || fields[2].equals("*");
            boolean anyDow = fields[4].equals("?") || fields[4].equals("*");
            return new Cron(field(fields[0], 0, 59, List.of(), 0), field(fields[1], 0, 23, List.of(), 0),
                    field(fields[2], 1, 31, List.of(), 1), field(fields[3], 1, 12, MONTHS, 1),
                    field(fields[4], 1, 7, DAYS, 1), field(fields[5], 1970, 2199, List.of(), 1970), anyDom, anyDow);
        }

        @Override
        public Instant next(Instant after) {
            ZonedDateTime t = after.atZone(ZoneOffset.UTC).truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
            ZonedDateTime limit = t.plusYears(5);
            while (t.isBefore(limit)) {
                if (!years.get(t.getYear() - 1970)) {
                    t = t.plusYears(1).withDayOfYear(1).truncatedTo(ChronoUnit.DAYS);
                } else if (!months.get(t.getMonthValue() - 1)) {
                    t = t.plusMonths(1).withDayOfMonth(1).truncatedTo(ChronoUnit.DAYS);
                } else if (!dayMatches(t.toLocalDate())) {
                    t = t.plusDays(1).truncatedTo(ChronoUnit.DAYS);
                } else if (!hours.get(t.getHour())) {
                    t = t.plusHours(1).truncatedTo(ChronoUnit.HOURS);
                } else if (!minutes.get(t.getMinute())) {
                    t = t.plusMinutes(1);
                } else {
                    return t.toInstant();
                }
            }
            throw new IllegalStateException("cron expression never fires within five years");
        }

        private boolean dayMatches(LocalDate date) {
            boolean dom = daysOfMonth.get(date.getDayOfMonth() - 1);
            int sundayFirst = date.getDayOfWeek() == DayOfWeek.SUNDAY ? 1 : date.getDayOfWeek().getValue() + 1;
            boolean dow = daysOfWeek.get(sundayFirst - 1);
            if (anyDayOfMonth) {
                return dow;
            }
            if (anyDayOfWeek) {
                return dom;
            }
            return dom && dow;
        }

        /** A BitSet indexed from {@code offset}: {@code *}, {@code ?}, lists, ranges, steps, names. */
        private static BitSet field(String text, int min, int max, List<String> names, int offset) {
            var bits = new BitSet();
            for (String part : text.split(",")) {
                String range = part;
                int step = 1;
                int slash = part.indexOf('/');
                if (slash >= 0) {
                    range = part.substring(0, slash);
                    step = Integer.parseInt(part.substring(slash + 1));
                    if (step < 1) {
                        throw new IllegalArgumentException("cron step < 1: " + part);
                    }
                }
                int from;
                int to;
                if (range.equals("*") || range.equals("?")) {
                    from = min;
                    to = max;
                } else if (range.contains("-")) {
                    from = value(range.substring(0, range.indexOf('-')), names, offset);
                    to = value(range.substring(range.indexOf('-') + 1), names, offset);
                } else {
                    from = value(range, names, offset);
                    to = slash >= 0 ? max : from;
                }
                if (from < min || to > max || from > to) {
                    throw new IllegalArgumentException("cron field value out of " + min + ".." + max + ": " + part);
                }
                for (int v = from; v <= to; v += step) {
                    bits.set(v - offset);
                }
            }
            return bits;
        }

        private static int value(String text, List<String> names, int offset) {
            int named = names.indexOf(text.toUpperCase(Locale.ROOT));
            if (named >= 0) {
                return named + offset;
            }
            try {
                return Integer.parseInt(text);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a cron value: " + text);
            }
        }
    }
}
