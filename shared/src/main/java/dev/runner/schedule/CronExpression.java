package dev.runner.schedule;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code cron(minutes hours day-of-month month day-of-week year)} with EventBridge's fields,
 * ranges and wildcards (, - * / ? L W #), evaluated in UTC. Day-of-week counts 1 = Sunday.
 * nextAfter walks the allowed years and months, then the days of each month, so a sparse
 * schedule costs at most one pass over the days up to 2199, never a minute-by-minute scan.
 */
final class CronExpression implements ScheduleExpression {

    /** The cron fields in EventBridge order, with their allowed values. */
    private enum Field {
        MINUTES("minutes", 0, 59, List.of()),
        HOURS("hours", 0, 23, List.of()),
        DAY_OF_MONTH("day-of-month", 1, 31, List.of()),
        MONTH("month", 1, 12,
                List.of("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")),
        DAY_OF_WEEK("day-of-week", 1, 7, List.of("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")),
        YEAR("year", 1970, 2199, List.of());

        final String label;
        final int min;
        final int max;
        /** Names for min, min + 1, … (JAN = 1, SUN = 1). */
        final List<String> names;

        Field(String label, int min, int max, List<String> names) {
            this.label = label;
            this.min = min;
            this.max = max;
            this.names = names;
        }

        int value(String token) {
            int named = names.indexOf(token);
            if (named >= 0) {
                return min + named;
            }
            if (!isSmallNumber(token)) {
                throw new IllegalArgumentException(label + ": '" + token + "' is not a number"
                        + (names.isEmpty() ? "" : " or a name (" + names.getFirst() + "-" + names.getLast() + ")"));
            }
            int value = Integer.parseInt(token);
            if (value < min || value > max) {
                throw new IllegalArgumentException(label + ": " + value + " is outside " + min + "-" + max);
            }
            return value;
        }
    }

    /** Digits only and short enough that parseInt cannot overflow; every cron value fits in four. */
    private static boolean isSmallNumber(String token) {
        return !token.isEmpty() && token.length() <= 4 && token.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /** Which days of a month fire: day-of-month or day-of-week, whichever is not '?'. */
    private sealed interface DayRule {
        /** Listed days of the month (1-31, ranges, steps). */
        record MonthDays(BitSet days) implements DayRule {}
        /** L in day-of-month. */
        record LastDayOfMonth() implements DayRule {}
        /** LW: the last Monday-to-Friday of the month. */
        record LastWeekdayOfMonth() implements DayRule {}
        /** nW: the weekday nearest day n, never leaving the month. */
        record NearestWeekday(int day) implements DayRule {}
        /** Listed days of the week (1 = Sunday). */
        record WeekDays(BitSet days) implements DayRule {}
        /** nL in day-of-week: the last such weekday of the month. */
        record LastWeekdayOf(int dayOfWeek) implements DayRule {}
        /** d#n: the n-th such weekday of the month. */
        record NthWeekday(int dayOfWeek, int nth) implements DayRule {}

        default boolean matches(LocalDate date) {
            return switch (this) {
                case MonthDays(BitSet days) -> days.get(date.getDayOfMonth());
                case LastDayOfMonth() -> date.getDayOfMonth() == date.lengthOfMonth();
                case LastWeekdayOfMonth() -> date.equals(weekdayNearest(date.withDayOfMonth(date.lengthOfMonth())));
                case NearestWeekday(int day) -> day <= date.lengthOfMonth()
                        && date.equals(weekdayNearest(date.withDayOfMonth(day)));
                case WeekDays(BitSet days) -> days.get(cronDayOfWeek(date));
                case LastWeekdayOf(int dayOfWeek) -> cronDayOfWeek(date) == dayOfWeek
                        && date.getDayOfMonth() + 7 > date.lengthOfMonth();
                case NthWeekday(int dayOfWeek, int nth) -> cronDayOfWeek(date) == dayOfWeek
                        && (date.getDayOfMonth() - 1) / 7 + 1 == nth;
            };
        }

        /** The Monday-to-Friday closest to {@code date} within its month (Quartz's W rule). */
        private static LocalDate weekdayNearest(LocalDate date) {
            return switch (date.getDayOfWeek()) {
                case SATURDAY -> date.getDayOfMonth() == 1 ? date.plusDays(2) : date.minusDays(1);
                case SUNDAY -> date.getDayOfMonth() == date.lengthOfMonth() ? date.minusDays(2) : date.plusDays(1);
                default -> date;
            };
        }

        /** EventBridge numbers days of the week 1 = Sunday … 7 = Saturday. */
        private static int cronDayOfWeek(LocalDate date) {
            return date.getDayOfWeek().getValue() % 7 + 1;
        }
    }

    private static final LocalDateTime FIRST = LocalDateTime.of(Field.YEAR.min, 1, 1, 0, 0);
    private static final Instant END = LocalDateTime.of(Field.YEAR.max + 1, 1, 1, 0, 0).toInstant(ZoneOffset.UTC);

    private final String text;
    private final BitSet minutes;
    private final BitSet hours;
    private final DayRule days;
    private final BitSet months;
    private final BitSet years;

    private CronExpression(String text, BitSet minutes, BitSet hours, DayRule days, BitSet months, BitSet years) {
        this.text = text;
        this.minutes = minutes;
        this.hours = hours;
        this.days = days;
        this.months = months;
        this.years = years;
    }

    /** @param expression stripped, starting with "cron(" and ending with ")" */
    static CronExpression parse(String expression) {
        String[] fields = expression.substring("cron(".length(), expression.length() - 1)
                .strip().toUpperCase(Locale.ROOT).split("\\s+");
        if (fields.length != 6 || fields[0].isEmpty()) {
            throw new IllegalArgumentException(expression + ": expects 6 fields, got " + (fields[0].isEmpty() ? 0 : fields.length)
                    + " (minutes hours day-of-month month day-of-week year)");
        }
        try {
            return new CronExpression(
                    "cron(" + String.join(" ", fields) + ")",
                    values(Field.MINUTES, fields[0]),
                    values(Field.HOURS, fields[1]),
                    dayRule(fields[2], fields[4]),
                    values(Field.MONTH, fields[3]),
                    values(Field.YEAR, fields[5]));
        } catch (IllegalArgumentException problem) {
            throw new IllegalArgumentException(expression + ": " + problem.getMessage(), problem);
        }
    }

    /** A field of , - * / items as the set of values it allows. */
    private static BitSet values(Field field, String text) {
        BitSet allowed = new BitSet(field.max + 1);
        for (String item : text.split(",", -1)) {
            int slash = item.indexOf('/');
            String range = slash < 0 ? item : item.substring(0, slash);
            int step = 1;
            if (slash >= 0) {
                String stepText = item.substring(slash + 1);
                if (!isSmallNumber(stepText) || Integer.parseInt(stepText) < 1) {
                    throw new IllegalArgumentException(field.label + ": step must be a positive integer in '" + item + "'");
                }
                step = Integer.parseInt(stepText);
            }
            int from;
            int to;
            int dash = range.indexOf('-');
            if (range.equals("*")) {
                from = field.min;
                to = field.max;
            } else if (dash >= 0) {
                from = field.value(range.substring(0, dash));
                to = field.value(range.substring(dash + 1));
                if (from > to) {
                    // Quartz would wrap around (FRI-MON); EventBridge does not document it, so we refuse rather than guess.
                    throw new IllegalArgumentException(field.label + ": range " + range + " runs backwards");
                }
            } else {
                from = field.value(range);
                // "N/step" means from N to the end of the field, as in "1/10" = minute 1, 11, 21, …
                to = slash >= 0 ? field.max : from;
            }
            for (int value = from; value <= to; value += step) {
                allowed.set(value);
            }
        }
        return allowed;
    }

    private static DayRule dayRule(String dayOfMonth, String dayOfWeek) {
        boolean monthAny = dayOfMonth.equals("?");
        boolean weekAny = dayOfWeek.equals("?");
        if (monthAny && weekAny) {
            throw new IllegalArgumentException("day-of-month and day-of-week cannot both be ?; exactly one must be ?");
        }
        if (!monthAny && !weekAny) {
            throw new IllegalArgumentException("day-of-month and day-of-week cannot both be specified; one must be ?");
        }
        return monthAny ? weekRule(dayOfWeek) : monthRule(dayOfMonth);
    }

    private static DayRule monthRule(String text) {
        if (text.equals("L")) {
            return new DayRule.LastDayOfMonth();
        }
        if (text.equals("LW")) {
            return new DayRule.LastWeekdayOfMonth();
        }
        if (text.endsWith("W")) {
            return new DayRule.NearestWeekday(Field.DAY_OF_MONTH.value(text.substring(0, text.length() - 1)));
        }
        if (text.contains("L") || text.contains("W") || text.contains("?")) {
            throw new IllegalArgumentException("day-of-month: L, LW, nW and ? stand alone, got " + text);
        }
        return new DayRule.MonthDays(values(Field.DAY_OF_MONTH, text));
    }

    private static DayRule weekRule(String text) {
        int hash = text.indexOf('#');
        if (hash >= 0 && text.contains(",")) {
            // EventBridge reads "3#1,6#3" as two expressions and refuses it.
            throw new IllegalArgumentException("day-of-week: # allows a single expression, got " + text);
        }
        boolean special = hash >= 0 || text.contains("L") || text.contains("?");
        if (special && text.matches(".*[,\\-/*].*")) {
            throw new IllegalArgumentException("day-of-week: L, nL, d#n and ? stand alone, got " + text);
        }
        if (text.equals("L")) {
            // L alone is the last day of the week: Saturday.
            return new DayRule.WeekDays(values(Field.DAY_OF_WEEK, "7"));
        }
        if (text.endsWith("L")) {
            return new DayRule.LastWeekdayOf(Field.DAY_OF_WEEK.value(text.substring(0, text.length() - 1)));
        }
        if (hash >= 0) {
            String nth = text.substring(hash + 1);
            if (!nth.matches("[1-5]")) {
                throw new IllegalArgumentException("day-of-week: the n in d#n must be 1-5, got " + text);
            }
            return new DayRule.NthWeekday(Field.DAY_OF_WEEK.value(text.substring(0, hash)), Integer.parseInt(nth));
        }
        if (special) {
            throw new IllegalArgumentException("day-of-week: L, nL, d#n and ? stand alone, got " + text);
        }
        return new DayRule.WeekDays(values(Field.DAY_OF_WEEK, text));
    }

    @Override
    public Optional<Instant> nextAfter(Instant after) {
        if (!after.isBefore(END)) {
            return Optional.empty();
        }
        LocalDateTime next = LocalDateTime.ofInstant(after, ZoneOffset.UTC).truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
        LocalDateTime start = next.isBefore(FIRST) ? FIRST : next;
        YearMonth startMonth = YearMonth.from(start);
        for (int year = years.nextSetBit(start.getYear()); year >= 0; year = years.nextSetBit(year + 1)) {
            for (int month = months.nextSetBit(0); month >= 0; month = months.nextSetBit(month + 1)) {
                YearMonth yearMonth = YearMonth.of(year, month);
                if (yearMonth.isBefore(startMonth)) {
                    continue;
                }
                int firstDay = yearMonth.equals(startMonth) ? start.getDayOfMonth() : 1;
                for (int day = firstDay; day <= yearMonth.lengthOfMonth(); day++) {
                    LocalDate date = yearMonth.atDay(day);
                    if (!days.matches(date)) {
                        continue;
                    }
                    LocalTime from = date.equals(start.toLocalDate()) ? start.toLocalTime() : LocalTime.MIDNIGHT;
                    Optional<LocalTime> time = firstTimeFrom(from);
                    if (time.isPresent()) {
                        return Optional.of(date.atTime(time.get()).toInstant(ZoneOffset.UTC));
                    }
                }
            }
        }
        return Optional.empty();
    }

    /** Whether the schedule fires at this UTC minute; the plain definition nextAfter's walk must agree with. */
    boolean firesAt(LocalDateTime minute) {
        return minute.getSecond() == 0 && minute.getNano() == 0
                && minutes.get(minute.getMinute())
                && hours.get(minute.getHour())
                && days.matches(minute.toLocalDate())
                && months.get(minute.getMonthValue())
                && minute.getYear() >= Field.YEAR.min && years.get(minute.getYear());
    }

    private Optional<LocalTime> firstTimeFrom(LocalTime from) {
        for (int hour = hours.nextSetBit(from.getHour()); hour >= 0; hour = hours.nextSetBit(hour + 1)) {
            int minute = minutes.nextSetBit(hour == from.getHour() ? from.getMinute() : 0);
            if (minute >= 0) {
                return Optional.of(LocalTime.of(hour, minute));
            }
        }
        return Optional.empty();
    }

    @Override
    public String text() {
        return text;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof CronExpression cron && cron.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
