package dev.runner.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostMeter;
import dev.runner.json.Json;
import dev.runner.local.LocalOptions;
import dev.runner.local.LocalRuntime;
import dev.runner.testing.FakeHandler;
import io.lettuce.core.RedisClient;

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

    /**
     * Waits until every run has ended (completed, with errors, or failed). Asks Postgres on a
     * connection of its own, so watching costs the meters nothing.
     */
    void awaitEnded(Collection<UUID> runIds, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        for (UUID runId : runIds) {
            while (!ended(runId)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("run " + runId + " did not end within " + within + ": " + run(runId));
                }
                LockSupport.parkNanos(20_000_000);
            }
        }
    }

    /** Items of a run in one status, read past the meters. */
    long count(UUID runId, String status) {
        return scalar("select count(*) from execution_items where run_id = ? and status = ?", runId, status);
    }

    /** Items of scheduled runs in one status, read past the meters. */
    long scheduleItems(String status) {
        return scalar("select count(*) from execution_items e join runs r using (run_id) where r.trigger = 'schedule' and e.status = ?",
                null, status);
    }

    private boolean ended(UUID runId) {
        return scalar("select count(*) from runs where run_id = ? and finished_at is not null", runId, null) == 1;
    }

    private synchronized long scalar(String sql, UUID runId, String status) {
        try {
            if (watcher == null) {
                var endpoints = runtime.endpoints();
                watcher = java.sql.DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
            }
            try (var statement = watcher.prepareStatement(sql)) {
                int index = 1;
                if (runId != null) {
                    statement.setObject(index++, runId);
                }
                if (status != null) {
                    statement.setString(index, status);
                }
                try (var rows = statement.executeQuery()) {
                    rows.next();
                    return rows.getLong(1);
                }
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private java.sql.Connection watcher;

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
    record Meters(Map<String, Long> sqs, long redisCommands, long redisClientCommands, long redisRoundTrips, long postgresStatements) {
        Meters since(Meters before) {
            Map<String, Long> sqsDelta = new HashMap<>();
            sqs.forEach((op, n) -> {
                long d = n - before.sqs.getOrDefault(op, 0L);
                if (d > 0) {
                    sqsDelta.put(op, d);
                }
            });
            return new Meters(sqsDelta, redisCommands - before.redisCommands, redisClientCommands - before.redisClientCommands,
                    redisRoundTrips - before.redisRoundTrips, postgresStatements - before.postgresStatements);
        }

        Meters minus(Meters other) {
            Map<String, Long> sqsLeft = new HashMap<>(sqs);
            other.sqs.forEach((op, n) -> sqsLeft.merge(op, -n, Long::sum));
            return new Meters(sqsLeft, redisCommands - other.redisCommands, redisClientCommands - other.redisClientCommands,
                    redisRoundTrips - other.redisRoundTrips, postgresStatements - other.postgresStatements);
        }

        long sqsTotal() {
            return SqsRequestCounter.total(sqs);
        }
    }

    Meters meters() {
        CostMeter.Costs costs = runtime.costs().snapshot();
        return new Meters(SqsRequestCounter.snapshot(), redisServerCommands(), costs.redisCommands(), costs.redisRoundTrips(),
                costs.sqlStatements());
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
        try {
            if (watcher != null) {
                watcher.close();
            }
        } catch (java.sql.SQLException ignored) {
            // closing anyway
        }
        redisClient.shutdown();
        handlers.close();
        runtime.close();
    }
}
