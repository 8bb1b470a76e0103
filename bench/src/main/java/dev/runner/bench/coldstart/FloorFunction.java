package dev.runner.bench.coldstart;

import com.amazonaws.services.lambda.runtime.Context;
import com.amazonaws.services.lambda.runtime.RequestStreamHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import software.amazon.lambda.powertools.metrics.Metrics;
import software.amazon.lambda.powertools.metrics.MetricsFactory;
import software.amazon.lambda.powertools.metrics.model.MetricUnit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

/**
 * The least a function can do with the libraries Runner is required to use, for the cold-start
 * floor (ColdStart {@code --floor}): no Runner code, only what the mission and issue 10 name.
 * {@code RUNNER_FLOOR} lists the parts ({@link Part}), each started at init on a thread of its own
 * (as Runner's root opens its connections) and awaited by the first invocation:
 * <ul>
 *   <li>{@code metrics}: one metric flushed by Powertools' metrics module (issue 10), at init and
 *       again in the invocation, as every function publishes its invocation's metrics;</li>
 *   <li>{@code postgres}: one pgjdbc connection (no pool, the login given, not read from Secrets
 *       Manager) and {@code SELECT 1};</li>
 *   <li>{@code redis}: one Lettuce connection (a standalone {@code RedisClient} with Lettuce's default
 *       resources and handshake) and {@code PING}.</li>
 * </ul>
 * A stream handler, as Runner's functions are: the runtime client's event serializer is not part of
 * the floor. Its task root has no Runner jar, so SLF4J finds no provider and logs nothing (Netty
 * falls back to the JDK's logging): a few dozen classes fewer than a function loads. Whatever a
 * function of Runner costs above this row is Runner's; this row itself is the libraries'.
 */
public final class FloorFunction implements RequestStreamHandler {

    /** What the floor does, named in {@code RUNNER_FLOOR} in lower case, comma-separated. */
    enum Part {
        METRICS, POSTGRES, REDIS;

        static String names(List<Part> parts) {
            return String.join(",", parts.stream().map(part -> part.name().toLowerCase(Locale.ROOT)).toList());
        }

        static EnumSet<Part> parse(String names) {
            EnumSet<Part> parts = EnumSet.noneOf(Part.class);
            for (String name : names.split(",")) {
                try {
                    parts.add(Part.valueOf(name.strip().toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("RUNNER_FLOOR names no part \"" + name + "\": metrics, postgres, redis", e);
                }
            }
            return parts;
        }
    }

    private final List<CompletableFuture<String>> opening = new ArrayList<>();
    private final boolean flushesMetrics;

    public FloorFunction() {
        EnumSet<Part> parts = Part.parse(System.getenv().getOrDefault("RUNNER_FLOOR", ""));
        var threads = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().factory());
        flushesMetrics = parts.contains(Part.METRICS);
        if (flushesMetrics) {
            opening.add(CompletableFuture.supplyAsync(() -> flush("FloorInit"), threads));
        }
        if (parts.contains(Part.POSTGRES)) {
            opening.add(CompletableFuture.supplyAsync(FloorFunction::selectOne, threads));
        }
        if (parts.contains(Part.REDIS)) {
            opening.add(CompletableFuture.supplyAsync(FloorFunction::ping, threads));
        }
    }

    @Override
    public void handleRequest(InputStream event, OutputStream output, Context context) throws IOException {
        StringBuilder answer = new StringBuilder("\"floor");
        for (CompletableFuture<String> part : opening) {
            answer.append(' ').append(part.join());
        }
        if (flushesMetrics) {
            answer.append(' ').append(flush("FloorInvocation"));
        }
        output.write(answer.append('"').toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String flush(String name) {
        Metrics metrics = MetricsFactory.getMetricsInstance();
        metrics.setNamespace("RunnerFloor");
        metrics.addMetric(name, 1, MetricUnit.COUNT);
        metrics.flush();
        return "metrics";
    }

    /** Left open, as a function's connection is for its next invocation. */
    private static String selectOne() {
        try {
            Connection connection = DriverManager.getConnection(System.getenv("RUNNER_DATABASE_URL"),
                    System.getenv("RUNNER_FLOOR_DB_USER"), System.getenv("RUNNER_FLOOR_DB_PASSWORD"));
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT 1")) {
                rows.next();
                return "postgres=" + rows.getInt(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("floor: Postgres", e);
        }
    }

    /** Left open, as a function's connection is for its next invocation. */
    private static String ping() {
        StatefulRedisConnection<String, String> connection = RedisClient.create(RedisURI.create(System.getenv("RUNNER_REDIS_URL"))).connect();
        return "redis=" + connection.sync().ping();
    }
}
