package dev.runner.guard;

/** The per-item codes of admitHandler-10.lua, named as the script names them (AdmitCodeTest checks both sides). */
enum AdmitCode {
    ADMITTED(0),
    PAUSED(1),
    BREAKER_OPEN(2),
    BREAKER_PROBING(3),
    HANDLER_RATE(4),
    HANDLER_CONCURRENCY(5),
    ADAPTIVE_STOP(6),
    ADAPTIVE_LIMIT(7);

    /** The number the script returns. */
    final int code;

    AdmitCode(int code) {
        this.code = code;
    }

    static AdmitCode of(long code) {
        for (AdmitCode value : values()) {
            if (value.code == code) {
                return value;
            }
        }
        throw new IllegalStateException("unknown admitHandler code " + code);
    }
}
