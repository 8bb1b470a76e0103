package dev.runner.store;

import org.postgresql.jdbc.SslMode;
import org.postgresql.ssl.LibPQFactory;
import org.postgresql.ssl.WrappedFactory;
import org.postgresql.util.PSQLException;

import java.io.IOException;
import java.net.Socket;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * pgjdbc's TLS for the functions' connections ({@code sslfactory}): where {@code sslmode} verifies the
 * server, by the CA file {@code sslrootcert} names, or by the JVM's trust store when none is named (RDS
 * Proxy's certificates chain to the Amazon Root CAs it holds); any other mode as pgjdbc's own
 * {@link LibPQFactory} has it. The host-name check stays pgjdbc's.
 *
 * <p>The session is offered ChaCha20-Poly1305 first and AES-128-GCM after it. The functions run C1
 * only (the template's {@code -XX:TieredStopAtLevel=1}), where the JDK's AES and GHASH intrinsics are
 * not used: AES-GCM then runs as plain Java and costs several times what ChaCha20-Poly1305 does, on
 * every statement. AES-256-GCM is left out because OpenSSL servers (Postgres) choose by their own
 * order, which puts it first; AES-128-GCM, which every TLS 1.3 server must offer, is the fallback.
 */
public final class PostgresTls extends WrappedFactory {

    /** Most preferred first: TLS 1.3, then TLS 1.2's ECDHE suites. */
    static final List<String> CIPHER_SUITES = List.of(
            "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");

    /** pgjdbc builds one per connection from the connection's properties. */
    public PostgresTls(Properties info) throws PSQLException {
        boolean jvmTrustStore = info.getProperty("sslrootcert") == null && SslMode.of(info).verifyCertificate();
        this.factory = jvmTrustStore ? (SSLSocketFactory) SSLSocketFactory.getDefault() : new LibPQFactory(info);
    }

    @Override
    public Socket createSocket(Socket socket, String host, int port, boolean autoClose) throws IOException {
        SSLSocket tls = (SSLSocket) factory.createSocket(socket, host, port, autoClose);
        Set<String> supported = Set.of(tls.getSupportedCipherSuites());
        tls.setEnabledCipherSuites(CIPHER_SUITES.stream().filter(supported::contains).toArray(String[]::new));
        return tls;
    }
}
