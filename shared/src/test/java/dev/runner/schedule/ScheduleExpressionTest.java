package dev.runner.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ScheduleExpressionTest {

    /** The next fire of {@code expression} after {@code after}, as an ISO instant, or "never". */
    private static String next(String expression, String after) {
        return ScheduleExpression.parse(expression).nextAfter(Instant.parse(after))
                .map(Instant::toString).orElse("never");
    }

    private static void assertRejected(String expression, String expectedProblem) {
        IllegalArgumentException thrown =
                assertThrows(IllegalArgumentException.class, () -> ScheduleExpression.parse(expression));
        assertTrue(thrown.getMessage().contains(expectedProblem),
                () -> "message '" + thrown.getMessage() + "' should contain '" + expectedProblem + "'");
        assertTrue(thrown.getMessage().startsWith(expression.strip()),
                () -> "message '" + thrown.getMessage() + "' should name the expression");
    }

    // --- parsing errors -------------------------------------------------------------------

    @Test
    void rejectsRateOfZero() {
        assertRejected("rate(0 minutes)", "value must be ≥ 1");
    }

    @Test
    void rejectsPluralUnitWithValueOne() {
        assertRejected("rate(1 minutes)", "value 1 takes the singular unit minute");
    }

    @Test
    void rejectsSingularUnitWithValueAboveOne() {
        assertRejected("rate(5 minute)", "takes the plural unit minutes");
    }

    @ParameterizedTest
    @ValueSource(strings = {"rate(1.5 hours)", "rate(-1 hours)", "rate(five hours)"})
    void rejectsRateValuesThatAreNotPositiveIntegers(String expression) {
        assertRejected(expression, "value must be a positive integer");
    }

    @Test
    void rejectsRateUnitsEventBridgeDoesNotKnow() {
        assertRejected("rate(30 seconds)", "unit must be minute(s), hour(s) or day(s)");
    }

    @Test
    void rejectsRateWithoutUnit() {
        assertRejected("rate(5)", "expects rate(value unit)");
    }

    @Test
    void rejectsTextThatIsNeitherRateNorCron() {
        assertRejected("every 5 minutes", "expects rate(value unit) or cron(");
    }

    @Test
    void rejectsCronWithFiveFields() {
        assertRejected("cron(0 12 * * ?)", "expects 6 fields, got 5");
    }

    @Test
    void rejectsCronWithBothDayFieldsSpecified() {
        assertRejected("cron(0 12 1 * MON *)", "day-of-month and day-of-week cannot both be specified; one must be ?");
        assertRejected("cron(0 12 * * * *)", "one must be ?");
    }

    @Test
    void rejectsCronWithBothDayFieldsQuestionMarks() {
        assertRejected("cron(0 12 ? * ? *)", "cannot both be ?");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "cron(60 * * * ? *)   | minutes: 60 is outside 0-59",
        "cron(0 24 * * ? *)   | hours: 24 is outside 0-23",
        "cron(0 0 32 * ? *)   | day-of-month: 32 is outside 1-31",
        "cron(0 0 0 * ? *)    | day-of-month: 0 is outside 1-31",
        "cron(0 0 1 13 ? *)   | month: 13 is outside 1-12",
        "cron(0 0 ? * 8 *)    | day-of-week: 8 is outside 1-7",
        "cron(0 0 ? * 0 *)    | day-of-week: 0 is outside 1-7",
        "cron(0 0 1 1 ? 1969) | year: 1969 is outside 1970-2199",
        "cron(0 0 1 1 ? 2200) | year: 2200 is outside 1970-2199",
    })
    void rejectsValuesOutsideTheirField(String expression, String problem) {
        assertRejected(expression, problem);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "cron(0 0 ? * JAN *)      | day-of-week: 'JAN' is not a number or a name (SUN-SAT)",
        "cron(0 0 1 MON ? *)      | month: 'MON' is not a number or a name (JAN-DEC)",
        "cron(0 0 1,,2 * ? *)     | day-of-month: '' is not a number",
        "cron(x 0 1 * ? *)        | minutes: 'X' is not a number",
        "cron(0/0 0 1 * ? *)      | minutes: step must be a positive integer",
        "cron(0 20-2 * * ? *)     | hours: range 20-2 runs backwards",
        "cron(0 0 ? * 3#1,6#3 *)  | day-of-week: # allows a single expression",
        "cron(0 0 ? * 3#6 *)      | day-of-week: the n in d#n must be 1-5",
        "cron(0 0 L-3 * ? *)      | day-of-month: L, LW, nW and ? stand alone",
        "cron(0 0 ? * 2,L *)      | day-of-week: L, nL, d#n and ? stand alone",
        "cron(0 0 ? * 2-6L *)     | day-of-week: L, nL, d#n and ? stand alone",
        "cron(0 0 ? * L3 *)       | day-of-week: L, nL, d#n and ? stand alone",
        "cron(0 0 ? * 1#2#3 *)    | day-of-week: the n in d#n must be 1-5",
        "cron(0 0 32W * ? *)      | day-of-month: 32 is outside 1-31",
    })
    void rejectsMalformedFieldsNamingTheField(String expression, String problem) {
        assertRejected(expression, problem);
    }

    @Test
    void normalisesSpacingAndNameCase() {
        assertEquals("cron(0 12 ? JAN MON-FRI *)",
                ScheduleExpression.parse("  cron( 0  12 ?\tjan mon-fri * ) ").text());
        assertEquals("rate(5 minutes)", ScheduleExpression.parse("rate(05   minutes)").text());
        assertEquals("rate(1 day)", ScheduleExpression.parse("rate(1 day)").text());
    }

    // --- rate -----------------------------------------------------------------------------

    @Test
    void rateFiresOnePeriodLaterAlignedToTheMinute() {
        assertEquals("2026-01-01T10:05:00Z", next("rate(5 minutes)", "2026-01-01T10:00:30.500Z"));
        assertEquals("2026-01-01T10:05:00Z", next("rate(5 minutes)", "2026-01-01T10:00:00Z"));
        assertEquals("2026-01-01T10:01:00Z", next("rate(1 minute)", "2026-01-01T10:00:59.999Z"));
    }

    @Test
    void rateInHoursAndDays() {
        assertEquals("2026-01-01T12:00:00Z", next("rate(2 hours)", "2026-01-01T10:00:10Z"));
        assertEquals("2026-01-02T10:00:00Z", next("rate(1 day)", "2026-01-01T10:00:10Z"));
        assertEquals(new ScheduleExpression.Rate(3, ChronoUnit.DAYS), ScheduleExpression.parse("rate(3 days)"));
    }

    // --- cron: times, lists, ranges, steps ---------------------------------------------------

    @Test
    void cronFiresStrictlyAfterTheGivenInstant() {
        assertEquals("2026-01-01T10:00:00Z", next("cron(0 10 * * ? *)", "2026-01-01T09:59:59Z"));
        assertEquals("2026-01-02T10:00:00Z", next("cron(0 10 * * ? *)", "2026-01-01T10:00:00Z"));
        assertEquals("2026-01-02T10:00:00Z", next("cron(0 10 * * ? *)", "2026-01-01T10:00:00.001Z"));
    }

    @Test
    void cronEveryMinuteFiresAtTheNextWholeMinute() {
        assertEquals("2026-01-01T10:01:00Z", next("cron(* * * * ? *)", "2026-01-01T10:00:30Z"));
    }

    @Test
    void stepsStartFromTheirBase() {
        // EventBridge's own example: 1/10 is minute 1, 11, 21, …
        assertEquals("2026-01-01T10:11:00Z", next("cron(1/10 * * * ? *)", "2026-01-01T10:01:00Z"));
        assertEquals("2026-01-01T10:40:00Z", next("cron(*/20 * * * ? *)", "2026-01-01T10:20:00Z"));
        assertEquals("2026-01-01T11:00:00Z", next("cron(*/20 * * * ? *)", "2026-01-01T10:40:00Z"));
    }

    @Test
    void listsAndRangesCombineWithSteps() {
        String expression = "cron(0/15 9-10,14 * * ? *)";
        assertEquals("2026-01-01T09:15:00Z", next(expression, "2026-01-01T09:14:00Z"));
        assertEquals("2026-01-01T14:00:00Z", next(expression, "2026-01-01T10:45:00Z"));
        assertEquals("2026-01-02T09:00:00Z", next(expression, "2026-01-01T14:45:00Z"));
        assertEquals("2026-01-01T15:00:00Z", next("cron(0 10,15 * * ? *)", "2026-01-01T10:00:00Z"));
    }

    @Test
    void monthStepsSkipUnlistedMonths() {
        assertEquals("2026-04-01T00:00:00Z", next("cron(0 0 1 1/3 ? *)", "2026-01-01T00:00:00Z"));
    }

    // --- cron: month and year ends, leap years ---------------------------------------------

    @Test
    void crossesMonthAndYearEnds() {
        assertEquals("2027-01-01T00:00:00Z", next("cron(0 0 1 * ? *)", "2026-12-31T12:00:00Z"));
        assertEquals("2027-01-01T00:00:00Z", next("cron(0 0 * * ? *)", "2026-12-31T00:00:00Z"));
        assertEquals("2026-02-01T08:30:00Z", next("cron(30 8 1 * ? *)", "2026-01-01T08:30:00Z"));
    }

    @Test
    void dayThirtyOneSkipsShortMonths() {
        assertEquals("2026-05-31T00:00:00Z", next("cron(0 0 31 * ? *)", "2026-04-01T00:00:00Z"));
    }

    @Test
    void februaryTwentyNinthWaitsForALeapYear() {
        assertEquals("2028-02-29T00:00:00Z", next("cron(0 0 29 2 ? *)", "2025-03-01T00:00:00Z"));
        assertEquals("2032-02-29T00:00:00Z", next("cron(0 0 29 2 ? *)", "2028-02-29T00:00:00Z"));
    }

    @Test
    void centuryYearsAreLeapOnlyEveryFourHundred() {
        // 2100 is not a leap year: the next 29 February after 2096 is in 2104.
        assertEquals("2104-02-29T00:00:00Z", next("cron(0 0 29 2 ? *)", "2096-03-01T00:00:00Z"));
    }

    @Test
    void lastDayOfMonthFollowsLeapYears() {
        assertEquals("2028-02-29T23:59:00Z", next("cron(59 23 L * ? *)", "2028-02-01T00:00:00Z"));
        assertEquals("2027-02-28T23:59:00Z", next("cron(59 23 L * ? *)", "2027-02-01T00:00:00Z"));
        assertEquals("2026-04-30T00:00:00Z", next("cron(0 0 L * ? *)", "2026-03-31T00:00:00Z"));
    }

    // --- cron: day of week ------------------------------------------------------------------

    @Test
    void dayOfWeekOneIsSunday() {
        // 2026-01-01 is a Thursday.
        assertEquals("2026-01-04T00:00:00Z", next("cron(0 0 ? * 1 *)", "2026-01-01T00:00:00Z"));
        assertEquals("2026-01-03T00:00:00Z", next("cron(0 0 ? * 7 *)", "2026-01-01T00:00:00Z"));
        assertEquals("2026-01-05T00:00:00Z", next("cron(0 0 ? * 2 *)", "2026-01-01T00:00:00Z"));
    }

    @Test
    void weekdayNamesMatchTheirNumbers() {
        // Friday 2026-01-02 after 10:00 → Monday 2026-01-05 at 09:00.
        assertEquals("2026-01-05T09:00:00Z", next("cron(0 9 ? * MON-FRI *)", "2026-01-02T10:00:00Z"));
        assertEquals(next("cron(0 9 ? * 2-6 *)", "2026-01-02T10:00:00Z"),
                next("cron(0 9 ? * MON-FRI *)", "2026-01-02T10:00:00Z"));
        assertEquals("2026-01-04T00:00:00Z", next("cron(0 0 ? * sun,sat *)", "2026-01-03T00:00:00Z"));
    }

    @Test
    void monthNamesMatchTheirNumbers() {
        assertEquals("2027-01-01T00:00:00Z", next("cron(0 0 1 JAN ? *)", "2026-01-01T00:00:00Z"));
        assertEquals("2026-06-01T00:00:00Z", next("cron(0 0 1 JUN-AUG ? *)", "2026-01-01T00:00:00Z"));
    }

    @Test
    void lastAloneInDayOfWeekIsSaturday() {
        assertEquals("2026-01-03T00:00:00Z", next("cron(0 0 ? * L *)", "2026-01-01T00:00:00Z"));
    }

    @Test
    void weekdayWithLIsTheLastSuchWeekdayOfTheMonth() {
        // Last Friday of January 2026 is the 30th; of February, the 27th.
        assertEquals("2026-01-30T00:00:00Z", next("cron(0 0 ? * 6L *)", "2026-01-01T00:00:00Z"));
        assertEquals("2026-02-27T00:00:00Z", next("cron(0 0 ? * FRIL *)", "2026-01-30T00:00:00Z"));
    }

    @Test
    void hashPicksTheNthWeekdayOfTheMonth() {
        // Second Tuesday of January 2026 is the 13th.
        assertEquals("2026-01-13T00:00:00Z", next("cron(0 0 ? * 3#2 *)", "2026-01-01T00:00:00Z"));
        assertEquals("2026-02-10T00:00:00Z", next("cron(0 0 ? * 3#2 *)", "2026-01-13T00:00:00Z"));
    }

    @Test
    void fifthWeekdaySkipsMonthsThatHaveOnlyFour() {
        // January and February 2026 have four Mondays; March has five (the 30th is the fifth).
        assertEquals("2026-03-30T00:00:00Z", next("cron(0 0 ? * 2#5 *)", "2026-01-01T00:00:00Z"));
    }

    // --- cron: W --------------------------------------------------------------------------

    @Test
    void nearestWeekdayMovesSaturdayBackToFriday() {
        // 2026-08-15 is a Saturday.
        assertEquals("2026-08-14T00:00:00Z", next("cron(0 0 15W * ? *)", "2026-08-01T00:00:00Z"));
    }

    @Test
    void nearestWeekdayMovesSundayForwardToMonday() {
        // 2026-03-15 is a Sunday.
        assertEquals("2026-03-16T00:00:00Z", next("cron(0 0 15W * ? *)", "2026-03-01T00:00:00Z"));
    }

    @Test
    void nearestWeekdayNeverLeavesTheMonth() {
        // 2026-08-01 is a Saturday: 1W is Monday the 3rd, not Friday 31 July.
        assertEquals("2026-08-03T00:00:00Z", next("cron(0 0 1W * ? *)", "2026-07-31T12:00:00Z"));
        // 2026-05-31 is a Sunday: 31W is Friday the 29th, not Monday 1 June.
        assertEquals("2026-05-29T00:00:00Z", next("cron(0 0 31W * ? *)", "2026-05-01T00:00:00Z"));
    }

    @Test
    void nearestWeekdayOnAWeekdayIsThatDay() {
        assertEquals("2026-01-15T00:00:00Z", next("cron(0 0 15W * ? *)", "2026-01-01T00:00:00Z"));
    }

    @Test
    void lastWeekdayOfMonthSkipsTheWeekend() {
        // 2026-05-31 is a Sunday: LW is Friday the 29th.
        assertEquals("2026-05-29T00:00:00Z", next("cron(0 0 LW * ? *)", "2026-05-01T00:00:00Z"));
        // 2026-02-28 is a Saturday: LW is Friday the 27th.
        assertEquals("2026-02-27T00:00:00Z", next("cron(0 0 LW * ? *)", "2026-02-01T00:00:00Z"));
    }

    // --- cron: years ----------------------------------------------------------------------

    @Test
    void cronWhoseYearIsPastNeverFiresAgain() {
        assertEquals("never", next("cron(0 0 * * ? 2020)", "2026-01-01T00:00:00Z"));
        assertEquals("never", next("cron(0 0 1 1 ? 2026)", "2026-01-01T00:00:00Z"));
    }

    @Test
    void nothingFiresAfterTheLastYearEventBridgeAllows() {
        assertEquals("never", next("cron(0 0 * * ? *)", "2199-12-31T00:00:00Z"));
        assertEquals(Optional.empty(), ScheduleExpression.parse("cron(0 0 * * ? *)").nextAfter(Instant.MAX));
    }

    @Test
    void yearListsSkipToTheNextListedYear() {
        assertEquals("2035-01-01T00:00:00Z", next("cron(0 0 1 1 ? 2030,2035)", "2030-01-01T00:00:00Z"));
        assertEquals("2032-01-01T00:00:00Z", next("cron(0 0 1 1 ? 2030/2)", "2030-01-01T00:00:00Z"));
    }

    @Test
    void instantsBeforeNineteenSeventyFireAtTheFirstAllowedMinute() {
        assertEquals("1970-01-01T00:00:00Z", next("cron(0 0 * * ? *)", "1960-06-01T12:00:00Z"));
    }

    @Test
    void impossibleDatesAreFoundEmptyWithoutScanningMinutes() {
        // 31 February never exists: the search walks every month up to 2199 and must still be quick.
        assertTimeoutPreemptively(Duration.ofSeconds(1), () -> {
            assertEquals("never", next("cron(* * 31 2 ? *)", "1970-01-01T00:00:00Z"));
            assertEquals("never", next("cron(* * 30W 2 ? *)", "1970-01-01T00:00:00Z"));
        });
    }
}
