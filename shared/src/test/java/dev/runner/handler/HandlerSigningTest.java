package dev.runner.handler;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which secrets sign a handler's calls, decided on its keys as stored and the time. */
class HandlerSigningTest {

    private static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    private static final String GLOBAL = "global-key";

    private static SigningKeyStore.Stored key(String id, String secret, Instant created, Instant retires) {
        return new SigningKeyStore.Stored(new SigningKey(id, created, retires), secret);
    }

    @Test
    void aHandlerThatNeverHadAKeyIsSignedWithTheGlobalKeyAloneIfThereIsOne() {
        assertEquals(List.of(GLOBAL), HandlerSigning.secrets(List.of(), GLOBAL, T0));
        assertEquals(List.of(), HandlerSigning.secrets(List.of(), null, T0));
    }

    @Test
    void theFirstKeySignsBesideTheGlobalKeyUntilTheOverlapEnds() {
        List<SigningKeyStore.Stored> keys = List.of(key(SigningKey.GLOBAL, null, T0, T0.plusSeconds(60)), key("k1", "s1", T0, null));
        assertEquals(List.of("s1", GLOBAL), HandlerSigning.secrets(keys, GLOBAL, T0.plusSeconds(59)));
        assertEquals(List.of("s1"), HandlerSigning.secrets(keys, GLOBAL, T0.plusSeconds(60)));
        assertEquals(List.of("s1"), HandlerSigning.secrets(keys, null, T0), "no global key configured: its row signs nothing");
    }

    @Test
    void duringARotationTheCurrentKeySignsFirstThenTheOneItReplaces() {
        List<SigningKeyStore.Stored> keys = List.of(key("k1", "s1", T0, T0.plusSeconds(3600)), key("k2", "s2", T0.plusSeconds(10), null),
                key(SigningKey.GLOBAL, null, T0, T0));
        assertEquals(List.of("s2", "s1"), HandlerSigning.secrets(keys, GLOBAL, T0.plusSeconds(10)));
        assertEquals(List.of("s2"), HandlerSigning.secrets(keys, GLOBAL, T0.plusSeconds(3600)));
    }

    @Test
    void aHandlerWhoseKeysAreAllRetiredIsNeverSignedWithTheGlobalKeyAgain() {
        List<SigningKeyStore.Stored> keys = List.of(key("k1", "s1", T0, T0.plusSeconds(1)), key(SigningKey.GLOBAL, null, T0, T0));
        assertEquals(List.of(), HandlerSigning.secrets(keys, GLOBAL, T0.plusSeconds(2)));
    }
}
