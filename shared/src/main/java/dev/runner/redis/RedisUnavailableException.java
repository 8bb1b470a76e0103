package dev.runner.redis;

/** Redis could not be reached or did not answer in time: callers apply their stated fallback policy. */
public final class RedisUnavailableException extends RuntimeException {
    public RedisUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
