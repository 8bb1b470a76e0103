package dev.runner.aws;

import java.io.IOException;
import java.net.URI;

/**
 * An AWS call that did not succeed: the service's refusal (its HTTP status and error type, e.g.
 * 403 {@code AccessDenied}, 400 {@code QueueDoesNotExist}) or, with status 0, no answer at all.
 * The message names the type and the service's own words, never a request's body or a key.
 */
public final class AwsException extends RuntimeException {

    private final int status;
    private final String errorType;

    public AwsException(int status, String errorType, String message, Throwable cause) {
        super(errorType + ": " + message + (status > 0 ? " (HTTP " + status + ")" : ""), cause);
        this.status = status;
        this.errorType = errorType;
    }

    static AwsException unreachable(String service, URI endpoint, IOException cause) {
        return new AwsException(0, "Unreachable", service + " at " + endpoint + " unreachable ("
                + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")", cause);
    }

    /** The HTTP status; 0 when no answer came. */
    public int status() {
        return status;
    }

    /** The service's error type without its namespace ({@code AccessDenied}), or {@code Unreachable}. */
    public String errorType() {
        return errorType;
    }

    /** No answer came (connection refused or broken, timeout). */
    public boolean unreachable() {
        return status == 0 && errorType.equals("Unreachable");
    }

    /**
     * IAM refused the caller: its policies do not allow the action, never a passing fault. Told by
     * the error type alone: a 403 is also what a bad or expired token gets ({@code
     * InvalidClientTokenId}, {@code ExpiredToken}…), which says nothing about the function's grants.
     */
    public boolean accessDenied() {
        return errorType.startsWith("AccessDenied");
    }

    /** What AWS says to try again: a 5xx or a throttle. */
    boolean isTransient() {
        return status >= 500 || isThrottle();
    }

    /** The service asked to slow down: retried after a longer wait than other transient failures. */
    boolean isThrottle() {
        return status == 429 || errorType.contains("Throttl") || errorType.equals("TooManyRequestsException");
    }
}
