package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.runner.app.Runner;
import dev.runner.json.Json;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The deploy-time migration answers CloudFormation's pre-signed URL, against a real Postgres. */
class MigrateFunctionIT {

    @Test
    @SuppressWarnings("unchecked")
    void migratesAndAnswersSuccessToTheResponseUrl() throws Exception {
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        HttpServer cloudFormation = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        cloudFormation.createContext("/", exchange -> {
            answer.complete(Json.parse(exchange.getRequestBody().readAllBytes()));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        cloudFormation.start();
        try {
            Map<String, Object> event = new HashMap<>(Events.load("migrate.json", Map.class));
            event.put("ResponseURL", "http://127.0.0.1:" + cloudFormation.getAddress().getPort() + "/response");
            Map<String, Object> result;
            try (var stack = TestStack.create(Map.of()); var runner = new Runner(stack.config(), Clock.systemUTC())) {
                result = new MigrateFunction(runner).handleRequest(event, TestContext.of("migrate", 300_000));
            }

            assertEquals("SUCCESS", result.get("Status"), String.valueOf(result.get("Reason")));
            JsonNode sent = answer.get(10, TimeUnit.SECONDS);
            assertEquals("SUCCESS", sent.path("Status").asText());
            assertEquals("runner-schema", sent.path("PhysicalResourceId").asText());
            assertEquals(event.get("RequestId"), sent.path("RequestId").asText());
        } finally {
            cloudFormation.stop(0);
        }
    }

    @Test
    void aDeleteLeavesTheSchemaAndSucceeds() {
        Map<String, Object> event = new HashMap<>(Events.load("migrate.json", Map.class));
        event.put("RequestType", "Delete");
        event.remove("ResponseURL");
        try (var stack = TestStack.create(Map.of("RUNNER_DATABASE_URL", "jdbc:postgresql://127.0.0.1:1/none"));
             var runner = new Runner(stack.config(), Clock.systemUTC())) {
            Map<String, Object> result = new MigrateFunction(runner).handleRequest(event, TestContext.of("migrate", 300_000));
            assertEquals("SUCCESS", result.get("Status"));
        }
    }
}
