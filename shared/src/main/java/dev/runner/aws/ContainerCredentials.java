package dev.runner.aws;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The function's role credentials from the container credentials endpoint: what Lambda gives a
 * SnapStart function instead of {@code AWS_ACCESS_KEY_ID} and friends
 * ({@code AWS_CONTAINER_CREDENTIALS_FULL_URI}, {@code AWS_CONTAINER_AUTHORIZATION_TOKEN}), because
 * keys captured in a snapshot would be stale when it is restored days later. Read on first use,
 * kept, and read again five minutes before they expire (a restore finds them expired and reads
 * them again); a failed early read keeps the keys it has until they expire. The authorization
 * token and the keys never reach a message or a log line.
 */
public final class ContainerCredentials implements Supplier<AwsKeys> {

    private static final Duration REFRESH_BEFORE_EXPIRY = Duration.ofMinutes(5);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final int ATTEMPTS = 3;

    private final URI uri;
    private final Supplier<String> authorization;
    private final Clock clock;
    /** A lock, not {@code synchronized}: a read blocks on the network, and virtual threads (parallel sends) wait on it. */
    private final ReentrantLock reading = new ReentrantLock();
    private volatile AwsKeys keys;
    private volatile Instant expiration = Instant.MIN;

    /** @param authorization the {@code Authorization} header's value, asked at each read (a token file may be rewritten); null = none */
    public ContainerCredentials(URI uri, Supplier<String> authorization, Clock clock) {
        this.uri = Objects.requireNonNull(uri, "uri");
        this.authorization = Objects.requireNonNull(authorization, "authorization");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public AwsKeys get() {
        AwsKeys current = keys;
        if (current != null && clock.instant().isBefore(expiration.minus(REFRESH_BEFORE_EXPIRY))) {
            return current;
        }
        reading.lock();
        try {
            current = keys;
            Instant now = clock.instant();
            if (current != null && now.isBefore(expiration.minus(REFRESH_BEFORE_EXPIRY))) {
                return current; // another thread read them meanwhile
            }
            try {
                read();
            } catch (AwsException e) {
                if (current == null || !now.isBefore(expiration)) {
                    throw e;
                }
                // Still valid for a few minutes: used, and read again at the next request.
                System.err.println("AWS credentials not refreshed, the current ones expire at " + expiration + ": " + e.getMessage());
            }
            return keys;
        } finally {
            reading.unlock();
        }
    }

    private void read() {
        IOException last = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            if (attempt > 1) {
                AwsJsonClient.backOff(AwsJsonClient.retryWait(attempt - 1, AwsJsonClient.ERROR_BASE_MILLIS));
            }
            try {
                HttpURLConnection connection = (HttpURLConnection) uri.toURL().openConnection();
                connection.setConnectTimeout((int) TIMEOUT.toMillis());
                connection.setReadTimeout((int) TIMEOUT.toMillis());
                String header = authorization.get();
                if (header != null) {
                    connection.setRequestProperty("Authorization", header);
                }
                int status = connection.getResponseCode();
                byte[] body;
                try (InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream()) {
                    body = in == null ? new byte[0] : in.readAllBytes();
                }
                if (status == 200) {
                    accept(body);
                    return;
                }
                if (status < 500) {
                    // Status 0 on purpose: the endpoint's status is not an AWS service's answer (never read as AccessDenied).
                    throw new AwsException(0, "CredentialsRefused", "the container credentials endpoint refused the request (HTTP "
                            + status + ")", null);
                }
                last = new IOException("HTTP " + status);
            } catch (IOException e) {
                last = e;
            }
        }
        throw new AwsException(0, "CredentialsUnavailable", "the container credentials endpoint did not answer ("
                + last.getClass().getSimpleName() + ": " + last.getMessage() + ")", last);
    }

    private void accept(byte[] body) {
        try {
            JsonNode node = Json.parse(body);
            AwsKeys read = new AwsKeys(Json.text(node, "AccessKeyId"), Json.text(node, "SecretAccessKey"), Json.optionalText(node, "Token"));
            String expires = Json.optionalText(node, "Expiration");
            expiration = expires == null ? Instant.MAX : Instant.parse(expires);
            keys = read;
        } catch (IllegalArgumentException | DateTimeParseException e) {
            // never the body: it holds the keys
            throw new AwsException(0, "CredentialsUnreadable", "the container credentials endpoint's answer is not"
                    + " {AccessKeyId, SecretAccessKey, Token, Expiration}", null);
        }
    }

    @Override
    public String toString() {
        return "ContainerCredentials[" + uri + "]";
    }
}
