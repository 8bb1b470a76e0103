package dev.runner.integration;

import java.util.Locale;

/** Which way a handler moves data: into the tenant's system of record or out to the external one. */
public enum Direction {
    INBOUND,
    OUTBOUND;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Direction fromWire(String value) {
        for (Direction direction : values()) {
            if (direction.wireName().equals(value)) {
                return direction;
            }
        }
        throw new IllegalArgumentException("direction must be inbound or outbound: " + value);
    }
}
