package dev.runner.redis;

/** A script failed inside Redis (an error reply, a wrong key type…): a bug to fix, not an outage to wait out. */
public final class RedisScriptException extends RuntimeException {
    public RedisScriptException(Script script, Throwable cause) {
        super(script.resource() + " failed: " + cause.getMessage(), cause);
    }
}
