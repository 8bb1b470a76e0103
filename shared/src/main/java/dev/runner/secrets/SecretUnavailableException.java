package dev.runner.secrets;

/** A secret could not be read; the message names the secret, never its value. */
public final class SecretUnavailableException extends RuntimeException {
    public SecretUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
