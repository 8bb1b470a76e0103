package dev.runner.guard;

/** Why Redis did not decide and the guard let everything through (the fail-open policy). */
public enum FailOpen {
    /** Redis unreachable, too slow or unable to serve now: an outage, expected to pass. */
    REDIS_UNAVAILABLE,
    /** Redis answered, but a script failed or its reply did not decode: a bug, logged as an error. */
    SCRIPT_FAILED
}
