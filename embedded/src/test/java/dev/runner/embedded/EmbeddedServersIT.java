package dev.runner.embedded;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Starts the real servers: proves the harness works on a bare machine (as root too). */
class EmbeddedServersIT {

    @Test
    void startsPostgresRedisAndSqsOnFreePorts() throws Exception {
        try (var servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree())) {
            var endpoints = servers.endpoints();
            try (var connection = DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
                 var result = connection.createStatement().executeQuery("select 1")) {
                assertTrue(result.next());
                assertEquals(1, result.getInt(1));
            }
            assertTrue(endpoints.redisUrl().startsWith("redis://127.0.0.1:"));
            assertTrue(endpoints.sqsEndpoint().startsWith("http://127.0.0.1:"));
        }
    }

    @Test
    void aTakenPortIsAOneLineError() throws Exception {
        try (var taken = new ServerSocket(0)) {
            var error = assertThrows(EmbeddedServers.PortTakenException.class,
                    () -> EmbeddedServers.start(new EmbeddedServers.Ports(0, taken.getLocalPort(), 0)));
            assertEquals("redis port " + taken.getLocalPort() + " is already in use; choose another or 0 for any free port", error.getMessage());
        }
    }

    @Test
    void postgresComesBackOnItsPortWithItsCommittedRows() throws Exception {
        try (var servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree())) {
            var endpoints = servers.endpoints();
            try (Connection before = connect(endpoints)) {
                before.createStatement().execute("create table kept (n int)");
                before.createStatement().execute("insert into kept values (42)");
            }
            try (Connection cut = connect(endpoints)) {
                servers.restartPostgres(Duration.ofMillis(200));
                // A session open across the restart is cut, as in a failover: clients must reconnect.
                assertThrows(SQLException.class, () -> cut.createStatement().executeQuery("select 1"));
            }
            try (Connection after = connect(endpoints);
                 var rows = after.createStatement().executeQuery("select n from kept")) {
                assertTrue(rows.next(), "the row committed before the restart is still there");
                assertEquals(42, rows.getInt(1));
            }
        }
    }

    @Test
    void redisComesBackOnItsPortEmpty() throws Exception {
        try (var servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree())) {
            URI redis = URI.create(servers.endpoints().redisUrl());
            assertEquals("+OK", redisCommand(redis, "SET fault-test 1"));
            assertEquals("$1", redisCommand(redis, "GET fault-test"));

            servers.restartRedis(Duration.ofMillis(200));

            assertEquals("$-1", redisCommand(redis, "GET fault-test"), "a restarted cache node is empty");
        }
    }

    @Test
    void aRestartAfterCloseIsRefused() {
        var servers = EmbeddedServers.start(EmbeddedServers.Ports.anyFree());
        servers.close();
        assertThrows(IllegalStateException.class, () -> servers.restartRedis(Duration.ZERO));
    }

    private static Connection connect(EmbeddedServers.Endpoints endpoints) throws SQLException {
        return DriverManager.getConnection(endpoints.jdbcUrl(), endpoints.dbUser(), endpoints.dbPassword());
    }

    /** One inline RESP command on a fresh connection; the first line of the reply. */
    private static String redisCommand(URI redis, String command) throws IOException {
        try (var socket = new Socket(redis.getHost(), redis.getPort())) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            out.write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        }
    }
}
