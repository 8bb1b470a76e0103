package dev.runner.local;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How the local runtime is started: command-line arguments and the caller's environment.
 *
 * @param template           the SAM template to wire (default ./template.yaml)
 * @param parameterOverrides template Parameters to set, as {@code sam deploy --parameter-overrides} would
 * @param environment        the caller's environment; its {@code RUNNER_*} variables reach every function
 * @param scheduleTick       replaces every schedule's period (RUNNER_SCHEDULE_TICK_MS), for demos and tests
 * @param demo               whether to serve and register the demo integration
 */
public record LocalOptions(Path template, Map<String, String> parameterOverrides, int apiPort, int postgresPort,
                           int redisPort, int sqsPort, int secretsPort, Map<String, String> environment,
                           Optional<Duration> scheduleTick, boolean demo) {

    public static final String USAGE = "usage: java -jar runner-local.jar [template.yaml] [--parameter Name=Value]... [--no-demo]";

    public LocalOptions {
        parameterOverrides = Map.copyOf(parameterOverrides);
        environment = Map.copyOf(environment);
        for (int port : new int[] {apiPort, postgresPort, redisPort, sqsPort, secretsPort}) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port out of 0..65535: " + port);
            }
        }
    }

    /** Ports, tick and demo from the environment (defaults in docs/local-runtime.md), everything else from the arguments. */
    public static LocalOptions parse(String[] args, Map<String, String> environment) {
        Path template = Path.of("template.yaml");
        Map<String, String> overrides = new LinkedHashMap<>();
        boolean demo = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--parameter") || arg.equals("-p")) {
                if (i + 1 >= args.length || !args[i + 1].contains("=")) {
                    throw new IllegalArgumentException(arg + " needs Name=Value; " + USAGE);
                }
                String pair = args[++i];
                overrides.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
            } else if (arg.equals("--no-demo")) {
                demo = false;
            } else if (arg.startsWith("-")) {
                throw new IllegalArgumentException("unknown option " + arg + "; " + USAGE);
            } else {
                template = Path.of(arg);
            }
        }
        return defaults(template, environment).withParameters(overrides).withDemo(demo);
    }

    public static LocalOptions defaults(Path template, Map<String, String> environment) {
        String tick = environment.get("RUNNER_SCHEDULE_TICK_MS");
        Optional<Duration> scheduleTick = tick == null || tick.isBlank() ? Optional.empty()
                : Optional.of(Duration.ofMillis(positive(tick, "RUNNER_SCHEDULE_TICK_MS")));
        return new LocalOptions(template, Map.of(),
                port(environment, "RUNNER_API_PORT", 3000), port(environment, "RUNNER_PG_PORT", 5433),
                port(environment, "RUNNER_REDIS_PORT", 6380), port(environment, "RUNNER_SQS_PORT", 9324),
                port(environment, "RUNNER_SECRETS_PORT", 4584), environment, scheduleTick, true);
    }

    /** Every server on a free port: what tests use. */
    public LocalOptions withFreePorts() {
        return new LocalOptions(template, parameterOverrides, 0, 0, 0, 0, 0, environment, scheduleTick, demo);
    }

    public LocalOptions withParameters(Map<String, String> overrides) {
        return new LocalOptions(template, overrides, apiPort, postgresPort, redisPort, sqsPort, secretsPort, environment,
                scheduleTick, demo);
    }

    public LocalOptions withDemo(boolean on) {
        return new LocalOptions(template, parameterOverrides, apiPort, postgresPort, redisPort, sqsPort, secretsPort, environment,
                scheduleTick, on);
    }

    /**
     * RUNNER_PG_DURABLE: whether embedded Postgres commits as durably as Aurora (fsync, synchronous_commit and
     * full_page_writes on). Off unless set: its data directory is deleted when the runtime stops, so durability
     * protects nothing here and costs a disk flush per commit; the benchmarks turn it on (docs/local-runtime.md).
     */
    public boolean postgresDurable() {
        String value = environment.get("RUNNER_PG_DURABLE");
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("RUNNER_PG_DURABLE must be true or false: " + value);
        };
    }

    private static int port(Map<String, String> environment, String name, int fallback) {
        String value = environment.get(name);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(name + " out of 0..65535: " + value);
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a port number: " + value);
        }
    }

    private static long positive(String value, String name) {
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed <= 0) {
                throw new IllegalArgumentException(name + " must be > 0: " + value);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number: " + value);
        }
    }
}
