package dev.runner.redis;

import dev.runner.embedded.EmbeddedRedisCluster;
import dev.runner.embedded.TestServers;
import org.junit.jupiter.api.Named;

import java.util.UUID;
import java.util.stream.Stream;

/** The Redis deployments every script test runs against: a single server and a 3-master cluster. */
public final class RedisTargets {

    private static Redis standalone;
    private static Redis cluster;

    private RedisTargets() {}

    /**
     * A deployment under test. Not the Redis itself: JUnit closes AutoCloseable arguments after
     * each test, and these connections are shared per JVM.
     */
    public record Target(Redis redis) {}

    /** For {@code @MethodSource("dev.runner.redis.RedisTargets#both")}. */
    public static Stream<Named<Target>> both() {
        return Stream.of(Named.of("standalone", new Target(standalone())), Named.of("cluster", new Target(cluster())));
    }

    public static synchronized Redis standalone() {
        if (standalone == null) {
            standalone = Redis.connect(standaloneUrl());
        }
        return standalone;
    }

    public static synchronized Redis cluster() {
        if (cluster == null) {
            cluster = Redis.connect(clusterUrl());
        }
        return cluster;
    }

    public static String standaloneUrl() {
        return TestServers.get().redisUrl();
    }

    public static String clusterUrl() {
        return EmbeddedRedisCluster.shared().url();
    }

    /** A new Redis connection to the same deployment, e.g. one per concurrent acquirer. */
    public static Redis another(Redis redis) {
        return Redis.connect(redis.isCluster() ? clusterUrl() : standaloneUrl());
    }

    /** A key prefix no other test uses: the servers are shared per JVM. */
    public static Keys uniqueKeys() {
        return new Keys("t" + UUID.randomUUID().toString().replace("-", "").substring(0, 12));
    }

    /**
     * An admitTenant-4.lua call as a test vehicle (a script with a key per tag, many values): the
     * tenant's window and backlog sets, a one-minute window of {@code limit}, no horizon, the items
     * as manual ones.
     */
    public static Redis.Call admitTenant(Keys keys, String tenant, long now, int limit, java.util.List<String> itemIds) {
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(Long.toString(now), "60000", Integer.toString(limit), "5000", "0", "2", "3", "5"));
        itemIds.forEach(id -> {
            args.add(id);
            args.add("2");
        });
        return new Redis.Call(Script.ADMIT_TENANT, java.util.List.of(keys.tenantWindow(tenant), keys.tenantBacklog(tenant, 2),
                keys.tenantBacklog(tenant, 3), keys.tenantBacklog(tenant, 5)), args);
    }

    /** A URL on which nothing listens. */
    public static String closedPortUrl() {
        try (var socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return "redis://127.0.0.1:" + socket.getLocalPort();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
