package dev.runner.redis;

import dev.runner.cost.CostTracker;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which client the settings pick, with TLS and AUTH as said. Connecting is lazy, so no I/O happens here. */
class RedisUrlTest {

    @Test
    void theModeIsASettingNotGuessedFromTheScheme() {
        try (Redis tlsStandalone = Redis.connect(new Redis.Settings("rediss://primary.cache.amazonaws.com:6379", RedisMode.STANDALONE, null), CostTracker.NONE);
             Redis tlsCluster = Redis.connect(new Redis.Settings("rediss://cache.serverless.use1.cache.amazonaws.com:6379", RedisMode.CLUSTER, null), CostTracker.NONE);
             Redis plainCluster = Redis.connect(new Redis.Settings("redis://a.example:6379,b.example:6379", RedisMode.CLUSTER, null), CostTracker.NONE)) {
            assertFalse(tlsStandalone.isCluster());
            assertTrue(tlsStandalone.seeds().getFirst().isSsl());
            assertTrue(tlsCluster.isCluster());
            assertTrue(tlsCluster.seeds().getFirst().isSsl());
            assertTrue(plainCluster.isCluster());
            assertEquals(2, plainCluster.seeds().size());
            assertFalse(plainCluster.seeds().getFirst().isSsl());
        }
    }

    @Test
    void anAuthSourceIsAskedAtConnectTimeNotBefore() {
        AtomicInteger asked = new AtomicInteger();
        Redis.Auth auth = () -> {
            asked.incrementAndGet();
            return "token";
        };
        try (Redis standalone = Redis.connect(new Redis.Settings("rediss://primary.example:6379", RedisMode.STANDALONE, auth), CostTracker.NONE);
             Redis cluster = Redis.connect(new Redis.Settings("rediss://a.example:6379,b.example:6379", RedisMode.CLUSTER, auth), CostTracker.NONE)) {
            assertEquals(0, asked.get());
            var credentials = cluster.seeds().getLast().getCredentialsProvider().resolveCredentials().block();
            assertEquals("token", new String(credentials.getPassword()));
            assertEquals(1, asked.get());
            assertTrue(standalone.seeds().getFirst().getCredentialsProvider() != null);
        }
    }

    @Test
    void testUrlsMayNameClusterModeInTheirScheme() {
        try (Redis standalone = Redis.connect("redis://127.0.0.1:6379");
             Redis cluster = Redis.connect("redis-cluster://127.0.0.1:7000,127.0.0.1:7001");
             Redis tlsCluster = Redis.connect("rediss-cluster://user:secret@a.example:6379,b.example:6379")) {
            assertFalse(standalone.isCluster());
            assertTrue(cluster.isCluster());
            assertTrue(tlsCluster.isCluster());
            assertTrue(tlsCluster.seeds().getLast().isSsl());
        }
    }

    @Test
    void whatCannotBeMeantIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> Redis.connect("http://127.0.0.1:6379"));
        assertThrows(IllegalArgumentException.class, () -> Redis.connect("127.0.0.1:6379"));
        assertEquals("several seeds need cluster mode: redis://a:1,b:2", assertThrows(IllegalArgumentException.class,
                () -> new Redis.Settings("redis://a:1,b:2", RedisMode.STANDALONE, null)).getMessage());
        assertEquals("Redis URL must start with redis:// or rediss:// (TLS): redis-cluster://***@a:1", assertThrows(IllegalArgumentException.class,
                () -> new Redis.Settings("redis-cluster://user:pw@a:1", RedisMode.CLUSTER, null)).getMessage());
        assertEquals("one scheme for all seeds (rediss://h1:p1,h2:p2): rediss://a:1,rediss://b:2", assertThrows(IllegalArgumentException.class,
                () -> new Redis.Settings("rediss://a:1,rediss://b:2", RedisMode.CLUSTER, null)).getMessage());
    }
}
