package dev.runner.handler;

import java.time.Instant;

/**
 * A key Runner signs one handler's calls with, as the API shows it: never the secret, which is shown once, when
 * the key is created.
 *
 * @param keyId     a UUID, or {@value #GLOBAL} for the deployment-wide key while a handler moves off it
 * @param retiresAt null for the current key; else when it stops signing (a successor's overlap, or retired by a call)
 */
public record SigningKey(String keyId, Instant createdAt, Instant retiresAt) {

    /** The id of the deployment-wide key in a handler's list: it signs beside the handler's first key until retired. */
    public static final String GLOBAL = "global";

    /** Where a key is in its life, at a given time. */
    public enum State {
        /** Signs every call, until a successor is created. */
        CURRENT,
        /** Signs beside its successor until {@code retiresAt}, so the handler can switch keys without a refused call. */
        RETIRING,
        /** Never signs again. */
        RETIRED;

        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public State state(Instant now) {
        if (retiresAt == null) {
            return State.CURRENT;
        }
        return retiresAt.isAfter(now) ? State.RETIRING : State.RETIRED;
    }

    /** Whether it signs calls at {@code now}. */
    public boolean signs(Instant now) {
        return state(now) != State.RETIRED;
    }

    public boolean global() {
        return GLOBAL.equals(keyId);
    }
}
