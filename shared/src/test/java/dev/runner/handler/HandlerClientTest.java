package dev.runner.handler;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class HandlerClientTest {

    @Test
    void retryAfterIsReadInSecondsAndAnythingElseIsAbsent() {
        assertEquals(Duration.ofSeconds(30), HandlerClient.retryAfter("30"));
        assertEquals(Duration.ZERO, HandlerClient.retryAfter(" 0 "));
        assertNull(HandlerClient.retryAfter("Wed, 21 Oct 2026 07:28:00 GMT"));
        assertNull(HandlerClient.retryAfter("-5"));
        assertNull(HandlerClient.retryAfter(null));
    }
}
