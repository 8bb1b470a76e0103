package dev.runner.store;

import dev.runner.embedded.EmbeddedServers;
import dev.runner.embedded.TestServers;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The database server is verified, as the deployed functions verify RDS: the embedded Postgres
 * speaks TLS with a certificate for 127.0.0.1 from the test CA, and the URL every test and the
 * local runtime use says {@code sslmode=verify-full} with that CA. A trust store without that CA
 * (the JVM's, the deployed default) refuses the same server.
 */
class DatabaseTlsIT {

    @Test
    void theConnectionIsTlsVerifiedAgainstTheCa() throws SQLException {
        EmbeddedServers.Endpoints servers = embedded();
        try (Connection connection = login(servers.jdbcUrl(), servers);
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("select ssl from pg_stat_ssl where pid = pg_backend_pid()")) {
            assertTrue(row.next() && row.getBoolean(1), "the session is encrypted");
        }
    }

    @Test
    void theSessionRunsChaCha20Poly1305WhichC1RunsCheaperThanAesGcm() throws SQLException {
        EmbeddedServers.Endpoints servers = embedded();
        try (Connection connection = login(servers.jdbcUrl(), servers);
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("select version, cipher from pg_stat_ssl where pid = pg_backend_pid()")) {
            assertTrue(row.next());
            assertEquals("TLSv1.3", row.getString(1));
            assertEquals("TLS_CHACHA20_POLY1305_SHA256", row.getString(2), "the server's own order would choose AES-256-GCM");
        }
    }

    @Test
    void withoutARootCertificateTheJvmsTrustStoreVerifiesTheServer() {
        EmbeddedServers.Endpoints servers = embedded();
        String noRootCert = servers.jdbcUrl().replaceFirst("&sslrootcert=[^&]+", "");
        SQLException refused = assertThrows(SQLException.class, () -> login(noRootCert, servers).close());
        // The chain was checked and refused, not a missing ~/.postgresql/root.crt (pgjdbc's own default).
        assertTrue(String.valueOf(refused.getMessage()).contains("PKIX"), refused.getMessage());
    }

    @Test
    void aServerWhoseCertificateTheTrustStoreDoesNotChainToIsRefused() {
        EmbeddedServers.Endpoints servers = embedded();
        String jvmTrustStore = servers.jdbcUrl().replaceFirst("sslrootcert=[^&]+", "sslfactory=org.postgresql.ssl.DefaultJavaSSLFactory");
        SQLException refused = assertThrows(SQLException.class, () -> login(jvmTrustStore, servers).close());
        assertTrue(String.valueOf(refused.getMessage()).contains("SSL"), refused.getMessage());
    }

    private static EmbeddedServers.Endpoints embedded() {
        EmbeddedServers.Endpoints servers = TestServers.get();
        assumeTrue(servers.jdbcUrl().contains("sslmode=verify-full&sslrootcert="), "a server of the test CA (not a given DATABASE_URL)");
        return servers;
    }

    private static Connection login(String url, EmbeddedServers.Endpoints servers) throws SQLException {
        return new LoginDataSource(url, Credentials.fixed(servers.dbUser(), servers.dbPassword())).getConnection();
    }
}
