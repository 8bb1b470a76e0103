package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.runner.embedded.TestServers;
import dev.runner.testing.TestStack;
import dev.runner.json.Json;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The deploy-time migration against a real Postgres, answering a real HTTP server that stands in
 * for CloudFormation's pre-signed ResponseURL.
 */
class MigrateFunctionIT {

    private HttpServer cloudFormation;
    private final List<byte[]> answers = new CopyOnWriteArrayList<>();
    /** Requests the stand-in refuses with 503 before it takes one. */
    private final AtomicInteger refusals = new AtomicInteger();

    @BeforeEach
    void startTheResponseUrl() throws IOException {
        cloudFormation = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        cloudFormation.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            if (refusals.getAndDecrement() > 0) {
                exchange.sendResponseHeaders(503, -1);
            } else {
                answers.add(body);
                exchange.sendResponseHeaders(200, -1);
            }
            exchange.close();
        });
        cloudFormation.start();
    }

    @AfterEach
    void stopTheResponseUrl() {
        cloudFormation.stop(0);
    }

    @Test
    void migratesAndAnswersSuccessToTheResponseUrl() {
        Map<String, Object> event = event("Create");

        Map<String, Object> result = Lambda.map(new MigrateFunction(databaseEnvironment()), event, TestContext.of("migrate", 300_000));

        assertEquals("SUCCESS", result.get("Status"), String.valueOf(result.get("Reason")));
        JsonNode sent = onlyAnswer();
        assertEquals("SUCCESS", sent.path("Status").asText());
        assertEquals("runner-schema", sent.path("PhysicalResourceId").asText());
        assertEquals(event.get("RequestId"), sent.path("RequestId").asText());
        assertEquals(event.get("StackId"), sent.path("StackId").asText());
        assertEquals("Migration", sent.path("LogicalResourceId").asText());
    }

    @Test
    void aMigrationPostgresRejectsAnswersFailedSoTheDeployFails() throws SQLException {
        // A database whose history says nothing is applied yet but which already holds a table the
        // first migration creates: V1 itself fails on Postgres, as a migration that does not fit
        // the database it meets would.
        var servers = TestServers.get();
        String name = "conflict_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try (var admin = DriverManager.getConnection(servers.jdbcUrl(), servers.dbUser(), servers.dbPassword());
             var statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        }
        // Without the query: the embedded server's URL names its user there, which would win.
        String url = servers.jdbcUrl().replaceFirst("/[^/?]+(\\?.*)?$", "/" + name);
        Flyway.configure().dataSource(url, servers.dbUser(), servers.dbPassword()).baselineVersion("0").load().baseline();
        try (var connection = DriverManager.getConnection(url, servers.dbUser(), servers.dbPassword());
             var statement = connection.createStatement()) {
            statement.execute("CREATE TABLE integration_types (integration_key text)");
        }

        Map<String, String> env = new HashMap<>(databaseEnvironment());
        env.put("RUNNER_DATABASE_URL", url);
        Map<String, Object> result = Lambda.map(new MigrateFunction(env), event("Update"), TestContext.of("migrate", 300_000));

        assertEquals("FAILED", result.get("Status"));
        JsonNode sent = onlyAnswer();
        assertEquals("FAILED", sent.path("Status").asText());
        String reason = sent.path("Reason").asText();
        assertTrue(reason.contains("V1__core.sql") && reason.contains("already exists"), reason);
        assertEquals("runner-schema", sent.path("PhysicalResourceId").asText(),
                "a new physical id would make CloudFormation delete the old resource");
    }

    @Test
    void aHugeFailureIsCutToFitCloudFormationsFourKilobytes() {
        String statement = "INSERT INTO \"runs\" VALUES ('" + "é".repeat(20_000) + "')";
        var function = new MigrateFunction(databaseEnvironment(), database -> {
            throw new IllegalStateException("Migration V9__huge.sql failed\nStatement: " + statement);
        }, Duration.ofMillis(10));

        Lambda.map(function, event("Update"), TestContext.of("migrate", 300_000));

        assertTrue(answers.getFirst().length <= CloudFormationResponse.MAX_BYTES, answers.getFirst().length + " bytes");
        JsonNode sent = onlyAnswer();
        assertEquals("FAILED", sent.path("Status").asText());
        String reason = sent.path("Reason").asText();
        assertTrue(reason.startsWith("Migration failed (log stream test): IllegalStateException: Migration V9__huge.sql failed"), reason);
        assertTrue(reason.endsWith(CloudFormationResponse.TRUNCATED), reason);
    }

    @Test
    void aResponseUrlThatRefusesIsTriedAgain() {
        refusals.set(2);
        var function = new MigrateFunction(databaseEnvironment(), database -> { }, Duration.ofMillis(10));

        Lambda.map(function, event("Create"), TestContext.of("migrate", 300_000));

        assertEquals("SUCCESS", onlyAnswer().path("Status").asText());
    }

    @Test
    void aFunctionWithoutADatabaseAnswersFailedInsteadOfLeavingTheStackWaiting() {
        Map<String, Object> result = Lambda.map(new MigrateFunction(Map.of()), event("Create"), TestContext.of("migrate", 300_000));

        assertEquals("FAILED", result.get("Status"));
        assertTrue(onlyAnswer().path("Reason").asText().contains("RUNNER_DATABASE_URL is not set"));
    }

    @Test
    void aDeleteLeavesTheSchemaAndSucceeds() {
        Map<String, Object> result = Lambda.map(new MigrateFunction(Map.of("RUNNER_DATABASE_URL", "jdbc:postgresql://127.0.0.1:1/none")),
                event("Delete"), TestContext.of("migrate", 300_000));

        assertEquals("SUCCESS", result.get("Status"));
        assertEquals("SUCCESS", onlyAnswer().path("Status").asText());
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> event(String requestType) {
        Map<String, Object> event = new HashMap<>(Events.load("migrate.json", Map.class));
        event.put("RequestType", requestType);
        event.put("ResponseURL", "http://127.0.0.1:" + cloudFormation.getAddress().getPort() + "/response?X-Amz-Signature=0");
        return event;
    }

    private JsonNode onlyAnswer() {
        assertEquals(1, answers.size(), "answers received");
        return Json.parse(answers.getFirst());
    }

    /** What a function of a stack gets: the database login among the rest (queues), as the template gives it. */
    private static Map<String, String> databaseEnvironment() {
        try (var stack = TestStack.create(Map.of())) {
            return stack.environment();
        }
    }
}
