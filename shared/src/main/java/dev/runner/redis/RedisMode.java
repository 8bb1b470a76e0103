package dev.runner.redis;

import java.util.Locale;

/** How Redis is deployed: one primary, or a cluster whose keys are spread over slots (ElastiCache Serverless, cluster-mode groups). */
public enum RedisMode {
    STANDALONE, CLUSTER;

    /** {@code standalone} or {@code cluster}, any case. */
    public static RedisMode parse(String value) {
        for (RedisMode mode : values()) {
            if (mode.name().equalsIgnoreCase(value == null ? "" : value.trim())) {
                return mode;
            }
        }
        throw new IllegalArgumentException("Redis mode must be standalone or cluster: " + value);
    }

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
