package dev.runner.redis;

import dev.runner.app.Runner;
import dev.runner.config.RunnerConfig;
import dev.runner.config.RunnerConfigTest;
import dev.runner.cost.CostTracker;
import dev.runner.embedded.EmbeddedRedisCluster;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.embedded.TlsCertificates;
import dev.runner.guard.Admission;
import dev.runner.guard.Candidate;
import dev.runner.guard.DeferReason;
import dev.runner.guard.GroupAdmission;
import dev.runner.guard.GroupRequest;
import dev.runner.guard.Guard;
import dev.runner.guard.ConcurrencyAndRate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import javax.net.ssl.SSLHandshakeException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runner's Redis over TLS against real TLS-only servers ({@code port 0}: no plain port), whose certificates
 * a private CA signed: trusted when the CA is named, refused with the JDK's roots alone, refused for a
 * certificate of another host name, and a handshake that never comes bounded by the timeout.
 * Standalone with AUTH, and a three-node cluster whose bus speaks TLS too (ElastiCache Serverless's kind).
 */
class RedisTlsIT {

    private static final String TOKEN = "tls-auth-token";
    private static final Redis.Auth AUTH = () -> TOKEN;
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private static TlsCertificates certificates;
    private static final List<RedisServer> servers = new ArrayList<>();
    /** TLS only, certificate for 127.0.0.1, AUTH required. */
    private static int loopbackPort;
    /** TLS only, certificate for another host name signed by the same CA. */
    private static int otherHostPort;

    @BeforeAll
    static void startServers() throws IOException {
        certificates = TlsCertificates.create();
        loopbackPort = start(certificates.loopback(), "requirepass " + TOKEN);
        otherHostPort = start(certificates.otherHost());
    }

    @AfterAll
    static void stopServers() throws IOException {
        for (RedisServer server : servers) {
            server.stop();
        }
        if (certificates != null) {
            certificates.close();
        }
    }

    @Test
    void scriptsAndCommandsRunOverTlsWhenTheCaIsTrusted() {
        try (Redis redis = connect(url(loopbackPort), AUTH, certificates.caFile())) {
            admitsOneAtATime(redis);
            redis.set("tls-probe", "over TLS");
            assertEquals("over TLS", redis.get("tls-probe"));
        }
    }

    @Test
    void theRunnerTrustsTheCaNamedInItsEnvironment() {
        Map<String, String> env = RunnerConfigTest.minimal();
        env.put("RUNNER_REDIS_URL", "rediss://:" + TOKEN + "@127.0.0.1:" + loopbackPort);
        env.put("RUNNER_REDIS_CA_FILE", certificates.caFile().toString());
        try (Runner runner = new Runner(RunnerConfig.from(env), Clock.systemUTC())) {
            admitsOneAtATime(runner.redis());
        }
    }

    @Test
    void theTlsPortAnswersNoPlainClient() {
        try (Redis plain = Redis.connect(new Redis.Settings("redis://127.0.0.1:" + loopbackPort, RedisMode.STANDALONE, AUTH, TIMEOUT),
                CostTracker.NONE)) {
            assertThrows(RedisUnavailableException.class, () -> plain.get("tls-probe"));
        }
    }

    @Test
    void theJdksDefaultTrustRefusesACertificateOfAPrivateCa() {
        try (Redis redis = connect(url(loopbackPort), AUTH, null)) {
            var refused = assertThrows(RedisUnavailableException.class, () -> redis.get("tls-probe"));
            assertHandshakeRefused(refused, "unable to find valid certification path");
        }
    }

    @Test
    void aCertificateForAnotherHostNameIsRefused() {
        try (Redis redis = connect(url(otherHostPort), null, certificates.caFile())) {
            var refused = assertThrows(RedisUnavailableException.class, () -> redis.get("tls-probe"));
            assertHandshakeRefused(refused, "No subject alternative names matching IP address 127.0.0.1");
        }
    }

    @Test
    void aWrongAuthTokenIsRefusedOverTls() {
        try (Redis redis = connect(url(loopbackPort), () -> "not-the-token", certificates.caFile())) {
            var refused = assertThrows(RedisUnavailableException.class, () -> redis.get("tls-probe"));
            assertTrue(refused.getMessage().contains("WRONGPASS"), refused.getMessage());
        }
    }

    @Test
    void aPeerThatNeverAnswersTheHandshakeFailsWithinTheTimeout() throws IOException {
        try (var silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Redis redis = Redis.connect(new Redis.Settings(url(silent.getLocalPort()), RedisMode.STANDALONE, null,
                     Duration.ofMillis(500), certificates.caFile()), CostTracker.NONE)) {
            Thread.ofVirtual().start(() -> holdSilently(silent));
            // Ended by the seeds' timeout (500 ms), not by Lettuce's defaults: 10 s for a handshake, 60 s for a URI.
            assertTimeoutPreemptively(Duration.ofSeconds(4),
                    () -> assertThrows(RedisUnavailableException.class, () -> redis.get("tls-probe")));
        }
    }

    @Test
    void aClusterSpeakingTlsServesScriptsOnEveryNode() {
        try (EmbeddedRedisCluster cluster = EmbeddedRedisCluster.startTls(certificates);
             Redis redis = Redis.connect(new Redis.Settings(
                     "rediss://" + cluster.ports().stream().map(port -> "127.0.0.1:" + port).collect(Collectors.joining(",")),
                     RedisMode.CLUSTER, null, TIMEOUT, certificates.caFile()), CostTracker.NONE)) {
            assertTrue(redis.isCluster());
            admitsOneAtATime(redis);
            // Thirty tenants' windows spread over the three nodes' slots: each node is reached over TLS.
            Keys keys = RedisTargets.uniqueKeys();
            long now = System.currentTimeMillis();
            List<Redis.Call> calls = IntStream.range(0, 30)
                    .mapToObj(i -> RedisTargets.admitTenant(keys, "tenant-" + i, now, 10, List.of("x")))
                    .toList();
            assertEquals(30, redis.run(calls).size());
        }
    }

    /** The handler script, through the Guard, over {@code redis}: a lease taken by one item defers the next. */
    private static void admitsOneAtATime(Redis redis) {
        var guard = new Guard(redis, RedisTargets.uniqueKeys(), new RunnerConfig.Breaker(5, Duration.ofSeconds(30), 2),
                new RunnerConfig.TenantLimit(1000, Duration.ofSeconds(5)), TestClock.now());
        var oneAtATime = new ConcurrencyAndRate(1, 0);
        GroupAdmission first = guard.admit(List.of(new GroupRequest("crm-x", "sync", oneAtATime, List.of(new Candidate("a", "acme", 1))))).getFirst();
        assertFalse(first.failedOpen(), "the script ran: Redis was reached");
        assertInstanceOf(Admission.Admitted.class, first.decisions().getFirst());
        GroupAdmission second = guard.admit(List.of(new GroupRequest("crm-x", "sync", oneAtATime, List.of(new Candidate("b", "acme", 1))))).getFirst();
        assertFalse(second.failedOpen());
        var waiting = assertInstanceOf(Admission.Deferred.class, second.decisions().getFirst());
        assertEquals(DeferReason.HANDLER_CONCURRENCY, waiting.reason(), "a's lease is held in Redis");
    }

    /** Refused at the handshake (not a timeout, not a later error), and the message says why. */
    private static void assertHandshakeRefused(RedisUnavailableException refused, String why) {
        assertTrue(refused.getMessage().contains(why), refused.getMessage());
        Throwable cause = refused;
        while (cause != null && !(cause instanceof SSLHandshakeException)) {
            cause = cause.getCause();
        }
        assertInstanceOf(SSLHandshakeException.class, cause, "cause chain of " + refused);
    }

    private static Redis connect(String url, Redis.Auth auth, Path trusted) {
        return Redis.connect(new Redis.Settings(url, RedisMode.STANDALONE, auth, TIMEOUT, trusted), CostTracker.NONE);
    }

    private static String url(int port) {
        return "rediss://127.0.0.1:" + port;
    }

    /** A TLS-only Redis with this certificate; returns its TLS port. */
    private static int start(TlsCertificates.ServerCertificate certificate, String... settings) throws IOException {
        int port = EmbeddedServers.freePort();
        var builder = RedisServer.newRedisServer()
                .port(0)
                .bind("127.0.0.1")
                .setting("save \"\"")
                .setting("appendonly no");
        certificates.redisSettings(port, certificate).forEach(builder::setting);
        for (String setting : settings) {
            builder.setting(setting);
        }
        RedisServer server = builder.build();
        server.start();
        servers.add(server);
        return port;
    }

    /** Accepts connections and never writes: a TLS client waits for a ServerHello that does not come. */
    private static void holdSilently(ServerSocket silent) {
        List<Socket> held = new ArrayList<>();
        try {
            while (true) {
                held.add(silent.accept());
            }
        } catch (IOException closed) {
            held.forEach(socket -> {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a test's socket
                }
            });
        }
    }
}
