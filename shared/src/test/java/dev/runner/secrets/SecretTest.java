package dev.runner.secrets;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SecretTest {

    /** What the store holds, version after version; counts the reads. */
    private static final class Versions implements SecretSource {
        final Deque<String> values = new ArrayDeque<>();
        final AtomicInteger reads = new AtomicInteger();
        boolean down;

        Versions(String first) {
            values.add(first);
        }

        @Override
        public String read(String secretId) {
            reads.incrementAndGet();
            if (down) {
                throw new SecretUnavailableException("secret " + secretId + " could not be read: unreachable", null);
            }
            return values.getLast();
        }
    }

    private final AtomicLong now = new AtomicLong();
    private final Versions versions = new Versions("v1");
    private final Secrets secrets = new Secrets(versions, Duration.ofSeconds(1), now::get);

    @Test
    void isReadOnFirstUseAndThenServedFromMemory() {
        Secret secret = secrets.secret("runner/api-key");
        assertEquals(0, versions.reads.get(), "naming a secret reads nothing");
        assertEquals("v1", secret.value());
        versions.values.add("v2");
        assertEquals("v1", secret.value());
        assertEquals(1, versions.reads.get());
        assertTrue(secret == secrets.secret("runner/api-key"), "one secret per name");
    }

    @Test
    void aRefreshAfterARefusalReadsTheNewVersionAtMostOncePerInterval() {
        Secret secret = secrets.secret("runner/database");
        assertEquals("v1", secret.value());
        versions.values.add("v2");

        assertEquals("v1", secret.refresh(), "read within the interval: answered from memory");
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertEquals("v2", secret.refresh());
        assertEquals("v2", secret.refresh(), "a burst of refusals costs one read");
        assertEquals("v2", secret.value());
        assertEquals(2, versions.reads.get());
    }

    /** A key rotated with no refusal to tell of it (the callback key) is read again once the one in memory is older than asked. */
    @Test
    void aValueOlderThanItsCallerAllowsIsReadAgainAndKeptWhenTheReadFails() {
        Secret secret = secrets.secret("runner/callback-key");
        Duration maxAge = Duration.ofMinutes(5);
        assertEquals("v1", secret.value(maxAge));
        versions.values.add("v2");
        now.addAndGet(maxAge.minusSeconds(1).toNanos());
        assertEquals("v1", secret.value(maxAge), "younger than its maximum age: from memory");
        now.addAndGet(Duration.ofSeconds(1).toNanos());
        assertEquals("v2", secret.value(maxAge));
        assertEquals(2, versions.reads.get());

        versions.down = true;
        now.addAndGet(maxAge.toNanos());
        assertEquals("v2", secret.value(maxAge), "a failed re-read keeps the value in memory");
        assertEquals(3, versions.reads.get());
    }

    @Test
    void aFailedRefreshKeepsTheValueInMemoryAndAFailedFirstReadSaysWhich() {
        Secret secret = secrets.secret("runner/database");
        assertEquals("v1", secret.value());
        versions.down = true;
        now.addAndGet(Duration.ofSeconds(5).toNanos());
        assertEquals("v1", secret.refresh());

        Secret unread = secrets.secret("runner/redis-auth");
        var failure = assertThrows(SecretUnavailableException.class, unread::value);
        assertEquals("secret runner/redis-auth could not be read: unreachable", failure.getMessage());
        assertFalse(unread.toString().contains("v1"));
    }

    @Test
    void theDatabaseSecretHasTheShapeRdsGivesIt() {
        assertEquals(new DatabaseLogin("runner", "p@ss"),
                DatabaseLogin.parse("runner/database", "{\"username\":\"runner\",\"password\":\"p@ss\",\"engine\":\"postgres\"}"));
        assertEquals("secret runner/database lacks username or password",
                assertThrows(SecretUnavailableException.class, () -> DatabaseLogin.parse("runner/database", "{\"username\":\"runner\"}")).getMessage());
        assertFalse(new DatabaseLogin("runner", "p@ss").toString().contains("p@ss"));
    }
}
