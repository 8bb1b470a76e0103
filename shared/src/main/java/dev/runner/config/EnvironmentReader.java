package dev.runner.config;

import dev.runner.redis.RedisMode;
import dev.runner.security.Cidr;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Reads {@link RunnerConfig}'s variables; blank counts as unset. A bad value fails naming its variable. */
record EnvironmentReader(Map<String, String> env) {
    String optional(String name, String fallback) {
        String value = env.get(name);
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    /** A secret is given one way: by its secret's name, or by value (tests, development), not both. */
    void notBoth(SecretRole role, String... byValue) {
        if (optional(role.variable(), null) == null) {
            return;
        }
        for (String name : byValue) {
            if (optional(name, null) != null) {
                throw new IllegalStateException(role.variable() + " and " + name + " are both set: give the "
                        + role.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + " by its secret or by value, not both");
            }
        }
    }

    RunnerConfig.CredentialsEndpoint credentialsEndpoint() {
        String full = optional("AWS_CONTAINER_CREDENTIALS_FULL_URI", null);
        String relative = optional("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", null);
        String uri = full != null ? full : relative == null ? null : RunnerConfig.CredentialsEndpoint.ECS_ADDRESS + relative;
        return uri == null ? null : new RunnerConfig.CredentialsEndpoint(uri, optional("AWS_CONTAINER_AUTHORIZATION_TOKEN", null),
                optional("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", null));
    }

    RedisMode redisMode() {
        String value = optional("RUNNER_REDIS_MODE", "standalone");
        try {
            return RedisMode.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("RUNNER_REDIS_MODE must be standalone or cluster: " + value);
        }
    }

    /**
     * A PEM file of certificates to trust for {@code rediss://}: checked here, at the start, so a wrong path or file
     * fails it by name instead of every connect later.
     */
    Path trustedCertificates(String name, String redisUrl) {
        String value = optional(name, null);
        if (value == null) {
            return null;
        }
        if (!redisUrl.startsWith("rediss://")) {
            throw new IllegalStateException(name + " is for TLS, but RUNNER_REDIS_URL does not start with rediss://");
        }
        Path file = Path.of(value);
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalStateException(name + " " + value + " is not a readable file");
        }
        try (InputStream in = Files.newInputStream(file)) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new IllegalStateException(name + " " + value + " holds no certificate");
            }
        } catch (IOException | CertificateException e) {
            throw new IllegalStateException(name + " " + value + " holds no PEM certificate: " + e.getMessage());
        }
        return file;
    }

    String required(String name) {
        String value = optional(name, null);
        if (value == null) {
            throw new IllegalStateException(name + " is not set");
        }
        return value;
    }

    /** A comma-separated CIDR list (IPv4 and IPv6); unset = none. */
    List<Cidr> networks(String name) {
        try {
            return Cidr.parseList(optional(name, null));
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(name + " must be a comma-separated list of networks such as 10.0.0.0/8,fd00::/8: "
                    + e.getMessage());
        }
    }

    /** RUNNER_MANAGEMENT_AUTH: apiKey (default: bearer keys) or iam (SigV4 principals only). */
    boolean managementBearerKeys() {
        String mode = optional("RUNNER_MANAGEMENT_AUTH", "apiKey");
        return switch (mode) {
            case "apiKey" -> true;
            case "iam" -> false;
            default -> throw new IllegalStateException("RUNNER_MANAGEMENT_AUTH must be apiKey or iam: " + mode);
        };
    }

    /** An ISO-8601 duration (PT30S, P30D), > 0. */
    Duration duration(String name, Duration fallback) {
        String value = optional(name, null);
        if (value == null) {
            return fallback;
        }
        try {
            Duration parsed = Duration.parse(value);
            if (parsed.isNegative() || parsed.isZero()) {
                throw new IllegalStateException(name + " must be > 0: " + value);
            }
            return parsed;
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalStateException(name + " must be an ISO-8601 duration such as P30D or PT90S: " + value);
        }
    }

    int positiveInt(String name, int fallback) {
        String value = optional(name, null);
        if (value == null) {
            return fallback;
        }
        try {
            int parsed = Integer.parseInt(value);
            if (parsed <= 0) {
                throw new IllegalStateException(name + " must be > 0: " + value);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new IllegalStateException(name + " must be a whole number: " + value);
        }
    }
}
