package dev.runner.delivery;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ids from outside must fit a Postgres index and an SQS message: found by the webhook fuzz suite (an unpaired surrogate made SQS refuse a send after the commit). */
class DeliveryIdsTest {

    @Test
    void takesIdsOfAnyLanguageUpTo512Characters() {
        assertNull(DeliveryIds.problem("externalId", "lead-1"));
        assertNull(DeliveryIds.problem("externalId", "𝕽𝖚𝖓𝖓𝖊𝖗 é ü \t"));
        assertNull(DeliveryIds.problem("externalId", "x".repeat(512)));
    }

    @Test
    void refusesWhatPostgresOrSqsCannotTakeWithoutEchoingIt() {
        for (String id : new String[] {"x".repeat(513), "a\u0000b", "a\ud800b", "a\udc00", "\ud800", "a\uffff", "\ufffe"}) {
            String problem = DeliveryIds.problem("externalId", id);
            assertNotNull(problem, id);
            assertTrue(problem.startsWith("externalId "), problem);
            assertTrue(problem.length() < 80, problem);
        }
    }
}
