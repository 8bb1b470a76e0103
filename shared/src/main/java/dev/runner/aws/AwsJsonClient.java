package dev.runner.aws;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * One AWS service over its JSON protocol: each operation one SigV4-signed POST of a JSON body
 * ({@code X-Amz-Target: <prefix><Operation>}) over {@link HttpURLConnection}, whose keep-alive
 * cache keeps the connection for the next. What the SDK's client did for Runner, without its
 * ≈ 1,300 classes: a throttle, a 5xx or a broken connection is tried again (three attempts in
 * all), after a wait drawn at random up to a cap that doubles (100, 200 ms; 500, 1,000 ms after a
 * throttle), as the SDK's standard mode does: many functions throttled at once (a burst of cold
 * starts reading a secret) do not come back in step. Within an attempt, the JDK itself sends a
 * request once more, at once and on a new connection, when the connection breaks before an answer
 * (a kept-alive one the server closed, or one a SnapStart restore broke). Redirects are not
 * followed. Any other refusal is an {@link AwsException} naming the service's error type, never
 * retried.
 */
public final class AwsJsonClient {

    private static final int ATTEMPTS = 3;
    /** Retry waits' first cap after a 5xx or a broken connection, and after a throttle (the SDK's standard mode). */
    static final long ERROR_BASE_MILLIS = 100;
    static final long THROTTLE_BASE_MILLIS = 500;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /**
     * Retry waits' jitter. Not {@code ThreadLocalRandom}: its seeder sits in a SnapStart snapshot, so
     * every environment restored from one would draw the same waits, and their retries against a
     * throttled queue would arrive together. The JDK's default SecureRandom mixes fresh system
     * entropy into each draw.
     */
    private static final SecureRandom JITTER = new SecureRandom();

    /** A service as its JSON protocol names it. */
    public record Service(String signingName, String targetPrefix, String contentType) {
        /** SQS's JSON protocol (AWS JSON 1.0), what the SDK has spoken to SQS since 2.21. */
        public static final Service SQS = new Service("sqs", "AmazonSQS.", "application/x-amz-json-1.0");
        public static final Service SECRETS_MANAGER = new Service("secretsmanager", "secretsmanager.", "application/x-amz-json-1.1");

        /** The service's public endpoint in a region. */
        public URI regionalEndpoint(String region) {
            return URI.create("https://" + signingName + "." + region + (region.startsWith("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com"));
        }
    }

    private final Service service;
    private final URI endpoint;
    private final String host;
    private final String region;
    private final Supplier<AwsKeys> keys;
    private final Clock clock;
    private final Duration readTimeout;
    /** Whether a request goes unhashed: only to a server on this machine, and only when the caller asks (see {@link SigV4#unchecked}). */
    private final boolean unchecked;

    /**
     * @param endpoint         null = the region's endpoint; else an override (the local runtime, LocalStack)
     * @param keys             asked at each request, so refreshed credentials are used as soon as they exist
     * @param uncheckedLoopback sign requests to a loopback endpoint without hashing them (servers there check no signature)
     */
    public AwsJsonClient(Service service, URI endpoint, String region, Supplier<AwsKeys> keys, Clock clock, Duration readTimeout,
                         boolean uncheckedLoopback) {
        this.service = Objects.requireNonNull(service, "service");
        this.region = Objects.requireNonNull(region, "region (AWS_REGION)");
        this.endpoint = endpoint != null ? endpoint : service.regionalEndpoint(region);
        this.keys = Objects.requireNonNull(keys, "keys");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.readTimeout = Objects.requireNonNull(readTimeout, "readTimeout");
        this.host = hostHeader(this.endpoint);
        this.unchecked = uncheckedLoopback && isLoopback(this.endpoint);
    }

    public URI endpoint() {
        return endpoint;
    }

    /**
     * Calls one operation; its answer's JSON ({@code {}} when the body is empty).
     *
     * @throws AwsException refused, or unreachable after every attempt
     */
    public JsonNode call(String operation, JsonNode request) {
        byte[] body = Json.writeBytes(request);
        for (int attempt = 1; ; attempt++) {
            Answer answer;
            try {
                answer = post(operation, body);
            } catch (IOException e) {
                if (attempt < ATTEMPTS) {
                    // Not at once: the JDK has already sent it again on a new connection (a stale or restored socket).
                    backOff(retryWait(attempt, ERROR_BASE_MILLIS));
                    continue;
                }
                throw AwsException.unreachable(service.signingName(), endpoint, e);
            }
            if (answer.status() / 100 == 2) {
                return answer.body().length == 0 ? Json.object() : parse(operation, answer);
            }
            AwsException refused = refusal(answer);
            if (attempt < ATTEMPTS && refused.isTransient()) {
                backOff(retryWait(attempt, refused.isThrottle() ? THROTTLE_BASE_MILLIS : ERROR_BASE_MILLIS));
                continue;
            }
            throw refused;
        }
    }

    /**
     * Opens a connection to the endpoint now (an unsigned {@code GET /}, its answer, whatever it
     * is, read to its end), so the first call finds it in the keep-alive cache: a function's init
     * does this off the request path. A failure is left to the first call.
     */
    public void warm() {
        try {
            HttpURLConnection connection = (HttpURLConnection) endpoint.resolve("/").toURL().openConnection();
            connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            connection.setReadTimeout((int) readTimeout.toMillis());
            drain(connection, connection.getResponseCode());
        } catch (IOException e) {
            // the first call connects, and says what went wrong
        }
    }

    private record Answer(int status, String errorTypeHeader, byte[] body) {
    }

    private Answer post(String operation, byte[] body) throws IOException {
        AwsKeys signing = keys.get();
        String amzDate = SigV4.amzDate(clock.instant());
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Type", service.contentType());
        headers.put("X-Amz-Date", amzDate);
        headers.put("X-Amz-Target", service.targetPrefix() + operation);
        if (signing.sessionToken() != null) {
            headers.put("X-Amz-Security-Token", signing.sessionToken());
        }
        String authorization;
        if (unchecked) {
            authorization = SigV4.unchecked(amzDate, service.signingName(), region, signing);
        } else {
            headers.put("X-Amz-Content-Sha256", SigV4.contentSha256(body));
            headers.put("Host", host);
            authorization = SigV4.authorization("POST", "/", headers, body, service.signingName(), region, signing);
        }
        HttpURLConnection connection = (HttpURLConnection) endpoint.resolve("/").toURL().openConnection();
        connection.setRequestMethod("POST");
        connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        connection.setReadTimeout((int) readTimeout.toMillis());
        connection.setDoOutput(true);
        // A signed request goes where it was signed for, or fails: a redirect would carry the body and the session token elsewhere.
        connection.setInstanceFollowRedirects(false);
        // Not setFixedLengthStreamingMode: the JDK probes a kept-alive connection with a 1 ms blocking read before
        // every streamed POST on it (sun.net.www.http.HttpClient.available), which cost 2 ms a request (3.4 → 1.2 ms
        // per SendMessage to the local endpoint). Buffered, the body is one copy of a few KiB, and a request whose
        // connection breaks before the answer is sent once more by the JDK (sun.net.http.retryPost): see call.
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
        byte[] answer = drain(connection, status);
        return new Answer(status, connection.getHeaderField("x-amzn-ErrorType"), answer);
    }

    /** The answer's body, read to its end: that leaves the socket to the JDK's keep-alive cache. */
    private static byte[] drain(HttpURLConnection connection, int status) throws IOException {
        InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        try (InputStream stream = in) {
            return stream == null ? new byte[0] : stream.readAllBytes();
        }
    }

    private JsonNode parse(String operation, Answer answer) {
        try {
            return Json.parse(answer.body());
        } catch (Json.InvalidJsonException e) {
            throw new AwsException(answer.status(), "InvalidResponse", service.signingName() + " answered " + operation
                    + " with a body that is not JSON", null);
        }
    }

    private AwsException refusal(Answer answer) {
        JsonNode body = errorBody(answer);
        String type = answer.errorTypeHeader();
        if ((type == null || type.isBlank()) && body != null) {
            type = body.path("__type").asText(null);
        }
        type = type == null || type.isBlank() ? "HTTP " + answer.status() : shortType(type);
        String message = body == null
                ? new String(answer.body(), 0, Math.min(answer.body().length, 200), StandardCharsets.UTF_8)
                : body.path("message").asText(body.path("Message").asText(""));
        return new AwsException(answer.status(), type, message, null);
    }

    /** The error's type without its namespace ({@code com.amazonaws.sqs#QueueDoesNotExist} → {@code QueueDoesNotExist}). */
    private static String shortType(String type) {
        String shortType = type.substring(type.lastIndexOf('#') + 1);
        int colon = shortType.indexOf(':');
        return colon < 0 ? shortType : shortType.substring(0, colon);
    }

    private static JsonNode errorBody(Answer answer) {
        try {
            return answer.body().length == 0 ? null : Json.parse(answer.body());
        } catch (Json.InvalidJsonException e) {
            return null;
        }
    }

    /** What {@link HttpURLConnection} sends as Host: the port only when it is not the scheme's default. */
    private static String hostHeader(URI endpoint) {
        int port = endpoint.getPort();
        boolean defaultPort = port == -1 || (port == 443 && "https".equals(endpoint.getScheme()))
                || (port == 80 && "http".equals(endpoint.getScheme()));
        return defaultPort ? endpoint.getHost() : endpoint.getHost() + ":" + port;
    }

    /** Whether {@code endpoint} names this machine (a literal loopback address or localhost). */
    static boolean isLoopback(URI endpoint) {
        String host = endpoint == null ? null : endpoint.getHost();
        if (host == null) {
            return false;
        }
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (!host.matches("[0-9.]+|\\[?[0-9a-fA-F:]+\\]?")) {
            return false; // a name: resolving it here would be a lookup per client, and a name can move
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The wait before retry {@code retry} (1, 2, …): full jitter, a random time up to
     * {@code baseMillis × 2^(retry − 1)}.
     */
    static long retryWait(int retry, long baseMillis) {
        return JITTER.nextLong((baseMillis << (retry - 1)) + 1);
    }

    /** Waits before trying again; an interrupt ends the wait as a failure, the interrupt kept. */
    static void backOff(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AwsException(0, "Interrupted", "interrupted while waiting to try again", e);
        }
    }

    @Override
    public String toString() {
        return "AwsJsonClient[" + service.signingName() + " at " + endpoint + "]";
    }
}
