package dev.runner.embedded;

import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.sql.DriverManager;

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
}
