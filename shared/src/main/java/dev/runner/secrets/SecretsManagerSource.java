package dev.runner.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * AWS Secrets Manager's {@code GetSecretValue}, spoken directly: one signed POST of the JSON 1.1
 * protocol ({@code X-Amz-Target: secretsmanager.GetSecretValue}) over {@link HttpURLConnection}.
 * The SDK's client cost every function about 1,300 classes and 250–500 ms at cold start (its
 * client build, then its request pipeline on the first read) for this one call; bench/README.md,
 * cold start. A refusal (AccessDenied, no such secret) is a {@link SecretUnavailableException}
 * naming the secret and the service's error type, never the value; a throttle, a 5xx or a broken
 * connection is tried up to three times.
 */
public final class SecretsManagerSource implements SecretSource {

    private static final String SERVICE = "secretsmanager";
    private static final int ATTEMPTS = 3;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    private final URI endpoint;
    private final String region;
    private final Supplier<AwsKeys> keys;
    private final Clock clock;

    /**
     * @param endpoint null = the region's Secrets Manager; else an override (the local runtime's)
     * @param keys     asked at each read, so refreshed credentials are used as soon as they exist
     */
    public SecretsManagerSource(URI endpoint, String region, Supplier<AwsKeys> keys, Clock clock) {
        this.region = Objects.requireNonNull(region, "region (AWS_REGION)");
        this.endpoint = endpoint != null ? endpoint : regionalEndpoint(region);
        this.keys = Objects.requireNonNull(keys, "keys");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    static URI regionalEndpoint(String region) {
        return URI.create("https://secretsmanager." + region + (region.startsWith("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com"));
    }

    @Override
    public String read(String secretId) {
        byte[] body = Json.writeBytes(Json.object().put("SecretId", secretId));
        for (int attempt = 1; ; attempt++) {
            Response response;
            try {
                response = post("GetSecretValue", body);
            } catch (IOException e) {
                if (attempt < ATTEMPTS) {
                    pause(attempt);
                    continue;
                }
                throw new SecretUnavailableException("secret " + secretId + " could not be read: Secrets Manager at " + endpoint
                        + " unreachable (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
            }
            if (response.status() == 200) {
                return secretString(secretId, response.body());
            }
            String type = errorType(response);
            if (attempt < ATTEMPTS && (response.status() >= 500 || type.contains("Throttling"))) {
                pause(attempt);
                continue;
            }
            throw new SecretUnavailableException("secret " + secretId + " could not be read: " + type + ": " + errorMessage(response)
                    + " (HTTP " + response.status() + ")", null);
        }
    }

    private record Response(int status, String errorTypeHeader, byte[] body) {
    }

    private Response post(String operation, byte[] body) throws IOException {
        AwsKeys signing = keys.get();
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", "application/x-amz-json-1.1");
        headers.put("Host", host());
        headers.put("X-Amz-Content-Sha256", SigV4.contentSha256(body));
        headers.put("X-Amz-Date", SigV4.amzDate(clock.instant()));
        headers.put("X-Amz-Target", SERVICE + "." + operation);
        if (signing.sessionToken() != null) {
            headers.put("X-Amz-Security-Token", signing.sessionToken());
        }
        String authorization = SigV4.authorization("POST", "/", headers, body, SERVICE, region, signing);
        HttpURLConnection connection = (HttpURLConnection) endpoint.resolve("/").toURL().openConnection();
        connection.setRequestMethod("POST");
        connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        connection.setReadTimeout((int) READ_TIMEOUT.toMillis());
        connection.setDoOutput(true);
        connection.setFixedLengthStreamingMode(body.length);
        // Host is set by the connection itself, to the value signed above (host, and the port unless the scheme's).
        headers.forEach((name, value) -> {
            if (!name.equals("Host")) {
                connection.setRequestProperty(name, value);
            }
        });
        connection.setRequestProperty("Authorization", authorization);
        try (OutputStream out = connection.getOutputStream()) {
            out.write(body);
        }
        int status = connection.getResponseCode();
        InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        byte[] answer;
        try (InputStream stream = in) {
            answer = stream == null ? new byte[0] : stream.readAllBytes();
        }
        // Not disconnected: the body read to its end leaves the socket to the JDK's keep-alive cache for the next read.
        return new Response(status, connection.getHeaderField("x-amzn-ErrorType"), answer);
    }

    /** What {@link HttpURLConnection} sends as Host: the port only when it is not the scheme's default. */
    private String host() {
        int port = endpoint.getPort();
        boolean defaultPort = port == -1 || (port == 443 && "https".equals(endpoint.getScheme()))
                || (port == 80 && "http".equals(endpoint.getScheme()));
        return defaultPort ? endpoint.getHost() : endpoint.getHost() + ":" + port;
    }

    private static String secretString(String secretId, byte[] body) {
        JsonNode node;
        try {
            node = Json.parse(body);
        } catch (Json.InvalidJsonException e) {
            throw new SecretUnavailableException("secret " + secretId + " could not be read: Secrets Manager's answer is not JSON", null);
        }
        JsonNode value = node.get("SecretString");
        return value == null || value.isNull() ? null : value.asText();
    }

    /** The error's type without its namespace ({@code com.amazonaws...#AccessDeniedException} → {@code AccessDeniedException}). */
    private static String errorType(Response response) {
        String type = response.errorTypeHeader();
        if (type == null || type.isBlank()) {
            JsonNode node = errorBody(response);
            type = node == null ? null : node.path("__type").asText(null);
        }
        if (type == null || type.isBlank()) {
            return "HTTP " + response.status();
        }
        type = type.substring(type.lastIndexOf('#') + 1);
        int colon = type.indexOf(':');
        return colon < 0 ? type : type.substring(0, colon);
    }

    private static String errorMessage(Response response) {
        JsonNode node = errorBody(response);
        if (node == null) {
            return new String(response.body(), 0, Math.min(response.body().length, 200), StandardCharsets.UTF_8);
        }
        return node.path("message").asText(node.path("Message").asText(""));
    }

    private static JsonNode errorBody(Response response) {
        try {
            return response.body().length == 0 ? null : Json.parse(response.body());
        } catch (Json.InvalidJsonException e) {
            return null;
        }
    }

    private static void pause(int attempt) {
        try {
            Thread.sleep(100L << (attempt - 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SecretUnavailableException("interrupted while reading a secret", e);
        }
    }

    @Override
    public String toString() {
        return "SecretsManagerSource[" + endpoint + "]";
    }
}
