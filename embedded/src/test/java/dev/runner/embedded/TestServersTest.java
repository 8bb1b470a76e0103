package dev.runner.embedded;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** How the test servers are chosen, without starting any. */
class TestServersTest {

    @Test
    void embeddedServersAreTheDefault() {
        assertEquals(TestServers.Mode.EMBEDDED, TestServers.mode(Map.of()));
        assertEquals(TestServers.Mode.CONTAINERS, TestServers.mode(Map.of(TestServers.MODE, "containers")));
    }

    @Test
    void anUnknownChoiceOfServersIsRefusedWithTheChoices() {
        var error = assertThrows(IllegalArgumentException.class, () -> TestServers.mode(Map.of(TestServers.MODE, "kubernetes")));
        assertEquals("RUNNER_TEST_SERVERS is \"kubernetes\"; use embedded (the default) or containers", error.getMessage());
    }

    @Test
    void serversGivenByUrlStartNothingEvenWhenContainersAreAsked() {
        var endpoints = TestServers.resolve(Map.of(TestServers.MODE, "containers",
                "DATABASE_URL", "postgres://runner:pw@db.internal:6543/runner?sslmode=require",
                "REDIS_URL", "redis://cache.internal:6379", "SQS_ENDPOINT_URL", "http://localstack.internal:4566"));
        assertEquals("jdbc:postgresql://db.internal:6543/runner?sslmode=require", endpoints.jdbcUrl());
        assertEquals("runner", endpoints.dbUser());
        assertEquals("pw", endpoints.dbPassword());
        assertEquals("redis://cache.internal:6379", endpoints.redisUrl());
        assertEquals("http://localstack.internal:4566", endpoints.sqsEndpoint());
    }
}
