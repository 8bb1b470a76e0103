package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.time.Duration;

/**
 * A custom resource's answer to CloudFormation, PUT to the request's pre-signed ResponseURL. The
 * stack waits for it (up to the resource's ServiceTimeout), so it is sent whatever happened, and
 * CloudFormation rejects a body over 4 KB: a long Reason (a migration's SQL error) is cut to fit.
 * Sent with {@link HttpURLConnection}, as Runner's AWS requests are: {@code java.net.http}'s client
 * loads many more JDK classes and starts its selector thread, on Migrate's cold start.
 */
final class CloudFormationResponse {

    /** CloudFormation's limit on the whole response body. */
    static final int MAX_BYTES = 4096;
    static final String TRUNCATED = " [truncated; the function's log has the whole reason]";
    private static final int ATTEMPTS = 3;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    enum Status { SUCCESS, FAILED }

    private final Duration retryDelay;

    CloudFormationResponse(Duration retryDelay) {
        this.retryDelay = retryDelay;
    }

    /**
     * The response body for {@code event} (the custom resource request), at most {@link #MAX_BYTES}
     * bytes of UTF-8: {@code reason} loses its end first.
     */
    static byte[] body(CloudFormationCustomResourceEvent event, Status status, String reason, String physicalResourceId) {
        ObjectNode body = Json.object();
        body.put("Status", status.name());
        body.put("PhysicalResourceId", physicalResourceId);
        body.put("StackId", String.valueOf(event.getStackId()));
        body.put("RequestId", String.valueOf(event.getRequestId()));
        body.put("LogicalResourceId", String.valueOf(event.getLogicalResourceId()));
        body.put("Reason", reason);
        byte[] bytes = Json.writeBytes(body);
        if (bytes.length <= MAX_BYTES) {
            return bytes;
        }
        // The longest prefix (whole code points) that fits once escaped: escaping makes the size of
        // a prefix unknowable without writing it, and writing a few kilobytes twelve times is nothing.
        int fits = 0;
        int low = 0;
        int high = reason.codePointCount(0, reason.length());
        while (low <= high) {
            int middle = (low + high) >>> 1;
            body.put("Reason", cut(reason, middle));
            if (Json.writeBytes(body).length <= MAX_BYTES) {
                fits = middle;
                low = middle + 1;
            } else {
                high = middle - 1;
            }
        }
        body.put("Reason", cut(reason, fits));
        bytes = Json.writeBytes(body);
        if (bytes.length > MAX_BYTES) {
            throw new IllegalStateException("a response without its reason is still over " + MAX_BYTES + " bytes");
        }
        return bytes;
    }

    private static String cut(String reason, int codePoints) {
        return reason.substring(0, reason.offsetByCodePoints(0, codePoints)) + TRUNCATED;
    }

    /** PUTs {@code body}, retrying twice: an answer that never arrives holds the stack for the whole ServiceTimeout. */
    void send(String responseUrl, byte[] body) {
        URI url = URI.create(responseUrl);
        String failure = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                int status = put(url, body);
                if (status / 100 == 2) {
                    return;
                }
                failure = "HTTP " + status;
            } catch (IOException e) {
                failure = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            if (attempt < ATTEMPTS) {
                pause(retryDelay.multipliedBy(attempt));
            }
        }
        throw new IllegalStateException("CloudFormation's response URL refused the answer " + ATTEMPTS + " times, last: " + failure);
    }

    private static int put(URI url, byte[] body) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) url.toURL().openConnection();
        try {
            connection.setRequestMethod("PUT");
            connection.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
            connection.setReadTimeout((int) TIMEOUT.toMillis());
            // The pre-signed S3 URL is signed for an empty content type.
            connection.setRequestProperty("Content-Type", "");
            connection.setDoOutput(true);
            connection.setFixedLengthStreamingMode(body.length);
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body);
            }
            return connection.getResponseCode();
        } finally {
            connection.disconnect();
        }
    }

    private static void pause(Duration delay) {
        try {
            Thread.sleep(delay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted answering CloudFormation", e);
        }
    }
}
