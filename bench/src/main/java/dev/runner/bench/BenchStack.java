package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.json.Json;
import dev.runner.local.LocalOptions;
import dev.runner.local.LocalRuntime;
import dev.runner.testing.FakeHandler;
import io.lettuce.core.RedisClient;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * The whole system as the local runtime wires it from template.yaml (same pollers, batch sizes and
 * concurrency), a handler service speaking the contract, and the meters a workload reads: SQS
 * requests by operation, Redis commands counted by the server, Redis round trips and Postgres
 * statements counted by the functions' own clients.
 */
final class BenchStack implements AutoCloseable {

    static final String SIGNING_SECRET = "bench-handler-secret";

    final LocalRuntime runtime;
    final FakeHandler handlers = FakeHandler.start(SIGNING_SECRET);
    private final HttpClient http = HttpClient.newHttpClient();
    private final RedisClient redisClient;

    BenchStack(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        env.put("RUNNER_HANDLER_SIGNING_SECRET", SIGNING_SECRET);
        env.put("RUNNER_API_KEY", "bench-key");
        runtime = LocalRuntime.start(LocalOptions.defaults(Path.of("template.yaml"), env).withFreePorts().withDemo(false));
        redisClient = RedisClient.create(runtime.endpoints().redisUrl());
    }

    /** A type with one handler at the handler service, and the given tenants enabled for it. */
    void integration(String integrationKey, String handlerKey, boolean batch, ObjectNode configs, List<String> tenants, String webhookSecret) {
        ObjectNode type = Json.object().put("name", integrationKey);
        ObjectNode handler = type.putObject("handlers").putObject(handlerKey);
        handler.put("url", handlers.url(handlerKey)).put("direction", "inbound").put("batch", batch);
        handler.set("configs", configs);
        call("PUT", "/types/" + integrationKey, type, 200);
        for (String tenant : tenants) {
            call("PUT", "/tenants/" + tenant + "/integrations/" + integrationKey,
                    Json.object().put("enabled", true).put("webhookSecret", webhookSecret), 200);
        }
    }

    UUID manualRun(String tenant, String integrationKey, String handlerKey) {
        JsonNode created = call("POST", "/runs", Json.object().put("tenantId", tenant).put("integrationKey", integrationKey)
                .put("handlerKey", handlerKey), 202);
        return UUID.fromString(created.path("runId").asText());
    }

    JsonNode run(UUID runId) {
        return call("GET", "/runs/" + runId, null, 200);
    }

    /** Waits until every run has ended (completed, with errors, or failed). */
    void awaitEnded(Collection<UUID> runIds, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        for (UUID runId : runIds) {
            while (!run(runId).path("finishedAt").isTextual()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("run " + runId + " did not end within " + within + ": " + run(runId));
                }
                LockSupport.parkNanos(20_000_000);
            }
        }
    }

    JsonNode call(String method, String path, JsonNode body, int expected) {
        var request = HttpRequest.newBuilder(runtime.apiUrl().resolve(path))
                .header("Authorization", "Bearer bench-key")
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(Json.write(body)))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != expected) {
                throw new IllegalStateException(method + " " + path + " answered " + response.statusCode() + ": " + response.body());
            }
            return Json.parse(response.body());
        } catch (java.io.IOException e) {
            throw new IllegalStateException(method + " " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** POSTs raw bytes to a public route (webhooks); returns the status. */
    int post(String path, byte[] body, Map<String, String> headers) {
        var request = HttpRequest.newBuilder(runtime.apiUrl().resolve(path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(request::header);
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The meters at one instant. */
    record Meters(Map<String, Long> sqs, long redisCommands, long redisRoundTrips, long postgresStatements) {
        Meters since(Meters before) {
            Map<String, Long> sqsDelta = new HashMap<>();
            sqs.forEach((op, n) -> {
                long d = n - before.sqs.getOrDefault(op, 0L);
                if (d > 0) {
                    sqsDelta.put(op, d);
                }
            });
            return new Meters(sqsDelta, redisCommands - before.redisCommands, redisRoundTrips - before.redisRoundTrips,
                    postgresStatements - before.postgresStatements);
        }

        Meters minus(Meters other) {
            Map<String, Long> sqsLeft = new HashMap<>(sqs);
            other.sqs.forEach((op, n) -> sqsLeft.merge(op, -n, Long::sum));
            return new Meters(sqsLeft, redisCommands - other.redisCommands, redisRoundTrips - other.redisRoundTrips,
                    postgresStatements - other.postgresStatements);
        }

        long sqsTotal() {
            return SqsRequestCounter.total(sqs);
        }
    }

    Meters meters() {
        long roundTrips = 0;
        long statements = 0;
        for (Runner root : Runner.roots()) {
            roundTrips += root.redis().roundTripCount();
            statements += root.database().statementCount();
        }
        return new Meters(SqsRequestCounter.snapshot(), redisServerCommands(), roundTrips, statements);
    }

    /** Commands the Redis server executed, those inside scripts included (INFO commandstats). */
    private long redisServerCommands() {
        try (var connection = redisClient.connect()) {
            long total = 0;
            for (String line : connection.sync().info("commandstats").split("\r?\n")) {
                int calls = line.indexOf("calls=");
                if (line.startsWith("cmdstat_") && calls > 0 && !line.startsWith("cmdstat_info")) {
                    total += Long.parseLong(line.substring(calls + 6, line.indexOf(',', calls)));
                }
            }
            return total;
        }
    }

    /** The JVM's peak resident set (the embedded Redis and Postgres are processes of their own). */
    static long peakRssMb() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
                }
            }
        } catch (java.io.IOException ignored) {
            // not Linux: no figure
        }
        return -1;
    }

    @Override
    public void close() {
        redisClient.shutdown();
        handlers.close();
        runtime.close();
    }
}
