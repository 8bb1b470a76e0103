package dev.runner.redis;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which client a URL picks. Connecting is lazy, so no I/O happens here. */
class RedisUrlTest {

    @Test
    void redisSchemeIsStandalone() {
        try (Redis redis = Redis.connect("redis://127.0.0.1:6379")) {
            assertFalse(redis.isCluster());
        }
    }

    @Test
    void clusterAndTlsSchemesAreClusterClients() {
        try (Redis cluster = Redis.connect("redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
             Redis tls = Redis.connect("rediss://cache.serverless.use1.cache.amazonaws.com:6379");
             Redis tlsCluster = Redis.connect("rediss-cluster://user:secret@a.example:6379,b.example:6379")) {
            assertTrue(cluster.isCluster());
            assertTrue(tls.isCluster());
            assertTrue(tlsCluster.isCluster());
        }
    }

    @Test
    void unknownSchemeIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Redis.connect("http://127.0.0.1:6379"));
        assertThrows(IllegalArgumentException.class, () -> Redis.connect("127.0.0.1:6379"));
    }
}
