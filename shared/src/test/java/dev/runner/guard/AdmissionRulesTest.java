package dev.runner.guard;

import dev.runner.guard.HandlerLimits.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How the handler's and the tenant's answers combine, and what is given back. No I/O. */
class AdmissionRulesTest {

    private static final long NOW = 1_000_000L;

    @Test
    void admittedOnlyWhenBothAdmit() {
        var combined = AdmissionRules.combine("x", verdict(AdmitCode.ADMITTED, 0), 0, NOW);
        assertEquals(new Admission.Admitted("x"), combined.admission());
        assertFalse(combined.releaseHandler());
        assertEquals(OptionalLong.empty(), combined.refundTenantUpTo());
    }

    @Test
    void pausedWinsAndGivesBackEvenAFutureTenantSlot() {
        var combined = AdmissionRules.combine("x", verdict(AdmitCode.PAUSED, 0), 60_000, NOW);
        assertEquals(new Admission.Paused("x"), combined.admission());
        assertFalse(combined.releaseHandler(), "a paused handler took nothing");
        assertEquals(OptionalLong.of(Long.MAX_VALUE), combined.refundTenantUpTo());
    }

    @Test
    void tenantDeferralGivesBackWhatTheHandlerTookAndKeepsTheFutureSlot() {
        var combined = AdmissionRules.combine("x", verdict(AdmitCode.ADMITTED, 0), 7_000, NOW);
        assertEquals(new Admission.Deferred("x", Duration.ofSeconds(7), DeferReason.TENANT_LIMIT), combined.admission());
        assertTrue(combined.releaseHandler());
        assertEquals(OptionalLong.empty(), combined.refundTenantUpTo(), "the item comes back to its reserved slot");
    }

    @Test
    void handlerDeferralGivesBackTheTenantSlotTakenNow() {
        var combined = AdmissionRules.combine("x", verdict(AdmitCode.HANDLER_RATE, 3_000), 0, NOW);
        assertEquals(new Admission.Deferred("x", Duration.ofSeconds(3), DeferReason.HANDLER_RATE), combined.admission());
        assertFalse(combined.releaseHandler());
        assertEquals(OptionalLong.of(NOW), combined.refundTenantUpTo());
    }

    @Test
    void theLongerDelayWinsWithItsReason() {
        assertEquals(new Admission.Deferred("x", Duration.ofSeconds(60), DeferReason.TENANT_LIMIT),
                AdmissionRules.decide("x", verdict(AdmitCode.BREAKER_OPEN, 5_000), 60_000));
        assertEquals(new Admission.Deferred("x", Duration.ofSeconds(5), DeferReason.BREAKER_OPEN),
                AdmissionRules.decide("x", verdict(AdmitCode.BREAKER_OPEN, 5_000), 2_000));
        assertEquals(new Admission.Deferred("x", Duration.ofSeconds(5), DeferReason.BREAKER_OPEN),
                AdmissionRules.decide("x", verdict(AdmitCode.BREAKER_OPEN, 5_000), 5_000), "a tie goes to the handler's reason");
    }

    @ParameterizedTest
    @EnumSource(value = AdmitCode.class, names = {"BREAKER_OPEN", "BREAKER_PROBING", "HANDLER_RATE", "HANDLER_CONCURRENCY"})
    void everyHandlerDeferralKeepsItsReason(AdmitCode code) {
        var deferred = assertInstanceOf(Admission.Deferred.class, AdmissionRules.decide("x", verdict(code, 4_000), 0));
        assertEquals(code.name(), deferred.reason().name());
    }

    @Test
    void noDeferralIsShorterThanASecond() {
        assertEquals(Duration.ofSeconds(1),
                ((Admission.Deferred) AdmissionRules.decide("x", verdict(AdmitCode.HANDLER_RATE, 1), 0)).delay());
        assertEquals(Duration.ofSeconds(1),
                ((Admission.Deferred) AdmissionRules.decide("x", verdict(AdmitCode.ADMITTED, 0), 200)).delay());
    }

    @Test
    void aConcurrencyDeferralSaysToTheMillisecondWhenALeaseIsExpectedBack() {
        // The worker may wait that long in its invocation; a re-send rounds up to whole seconds (Settlement).
        assertEquals(Duration.ofMillis(80),
                ((Admission.Deferred) AdmissionRules.decide("x", verdict(AdmitCode.HANDLER_CONCURRENCY, 80), 0)).delay());
        assertEquals(Duration.ofMillis(1),
                ((Admission.Deferred) AdmissionRules.decide("x", verdict(AdmitCode.HANDLER_CONCURRENCY, 0), 0)).delay());
    }

    @Test
    void aReservedSlotIsNowOrAtLeastASecondAway() {
        assertEquals(Duration.ZERO, AdmissionRules.reservedDelay(0));
        assertEquals(Duration.ofSeconds(1), AdmissionRules.reservedDelay(3));
        assertEquals(Duration.ofSeconds(60), AdmissionRules.reservedDelay(60_000));
    }

    private static Verdict verdict(AdmitCode code, long delayMs) {
        return new Verdict(code, delayMs);
    }
}
