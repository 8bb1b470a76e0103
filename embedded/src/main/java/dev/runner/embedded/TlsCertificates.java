package dev.runner.embedded;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A private CA and server certificates signed by it, made with the JDK's own {@code keytool} (no
 * openssl on the machine is assumed), written as the PEM files a TLS Redis reads: one certificate for
 * 127.0.0.1, the address the tests connect to, and one for another host name, which a client that
 * checks host names must refuse. Everything lives in a temporary directory deleted at {@link #close()}.
 */
public final class TlsCertificates implements AutoCloseable {

    /** A server's certificate and its private key (PKCS#8), as PEM files. */
    public record ServerCertificate(Path certificateFile, Path keyFile) {}

    /** Not a secret: the keystores are temporary and hold test keys only. */
    private static final String PASSWORD = "runner-test";
    private static final String OTHER_HOST = "not-this-host.example";

    private final Path directory;
    private final Path caFile;
    private final ServerCertificate loopback;
    private final ServerCertificate otherHost;
    private final SSLContext trustingCa;

    private TlsCertificates(Path directory) throws IOException, GeneralSecurityException {
        this.directory = directory;
        Path caStore = directory.resolve("ca.p12");
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=Runner test CA",
                "-ext", "bc:c", "-validity", "2", "-keystore", caStore.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        KeyStore ca = load(caStore);
        caFile = writePem(directory.resolve("ca.pem"), "CERTIFICATE", ca.getCertificate("ca").getEncoded());
        loopback = signed("loopback", "CN=127.0.0.1", "san=ip:127.0.0.1", caStore);
        otherHost = signed("other-host", "CN=" + OTHER_HOST, "san=dns:" + OTHER_HOST, caStore);
        var trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(ca);
        trustingCa = SSLContext.getInstance("TLS");
        trustingCa.init(null, trust.getTrustManagers(), null);
    }

    /** Makes the CA and both server certificates (a few keytool runs, about a second each). */
    public static TlsCertificates create() {
        Path directory = null;
        try {
            directory = Files.createTempDirectory("runner-tls");
            return new TlsCertificates(directory);
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            if (directory != null) {
                delete(directory);
            }
            throw new IllegalStateException("test certificates not made: " + e.getMessage(), e);
        }
    }

    /** The CA's certificate: what a client must trust to accept either server certificate. */
    public Path caFile() {
        return caFile;
    }

    /** Valid for 127.0.0.1 (an IP subject alternative name). */
    public ServerCertificate loopback() {
        return loopback;
    }

    /** Signed by the same CA but for {@code not-this-host.example}: refused by a client that checks host names. */
    public ServerCertificate otherHost() {
        return otherHost;
    }

    /**
     * The settings of a Redis that speaks TLS only, on {@code tlsPort}, with this certificate (start it with
     * {@code port 0}: no plain port). Clients need no certificate of their own.
     */
    public List<String> redisSettings(int tlsPort, ServerCertificate certificate) {
        return List.of(
                "tls-port " + tlsPort,
                "tls-cert-file \"" + certificate.certificateFile() + "\"",
                "tls-key-file \"" + certificate.keyFile() + "\"",
                "tls-ca-cert-file \"" + caFile + "\"",
                "tls-auth-clients no");
    }

    /** A TLS socket to 127.0.0.1:{@code port} that trusts this CA and checks the host name, as a client should. */
    public Socket connect(int port) throws IOException {
        // By address, not InetAddress.getLoopbackAddress(): its name, localhost, is not what the certificate names.
        var socket = (SSLSocket) trustingCa.getSocketFactory().createSocket("127.0.0.1", port);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        socket.setSSLParameters(parameters);
        return socket;
    }

    /** A client's TLS context that trusts this CA (and nothing else). */
    public SSLContext trustingCa() {
        return trustingCa;
    }

    /** A server's TLS context presenting this certificate (and the CA's, its chain). */
    public SSLContext serverContext(ServerCertificate certificate) {
        try {
            CertificateFactory certificates = CertificateFactory.getInstance("X.509");
            Certificate server;
            Certificate ca;
            try (InputStream in = Files.newInputStream(certificate.certificateFile()); InputStream caIn = Files.newInputStream(caFile)) {
                server = certificates.generateCertificate(in);
                ca = certificates.generateCertificate(caIn);
            }
            String pem = Files.readString(certificate.keyFile()).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
            PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setKeyEntry("server", key, PASSWORD.toCharArray(), new Certificate[] {server, ca});
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, PASSWORD.toCharArray());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), null, null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("server TLS context not made: " + e.getMessage(), e);
        }
    }

    /** A key pair in a keystore of its own, its request signed by the CA with the given subject alternative name. */
    private ServerCertificate signed(String name, String subject, String alternativeName, Path caStore)
            throws IOException, GeneralSecurityException {
        Path store = directory.resolve(name + ".p12");
        Path request = directory.resolve(name + ".csr");
        Path certificate = directory.resolve(name + ".pem");
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", subject,
                "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
        keytool("-certreq", "-alias", name, "-keystore", store.toString(), "-storepass", PASSWORD, "-file", request.toString());
        keytool("-gencert", "-alias", "ca", "-keystore", caStore.toString(), "-storepass", PASSWORD, "-infile", request.toString(),
                "-outfile", certificate.toString(), "-rfc", "-validity", "2", "-ext", alternativeName);
        byte[] key = load(store).getKey(name, PASSWORD.toCharArray()).getEncoded();
        return new ServerCertificate(certificate, writePem(directory.resolve(name + "-key.pem"), "PRIVATE KEY", key));
    }

    private static KeyStore load(Path store) throws IOException, GeneralSecurityException {
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, PASSWORD.toCharArray());
        }
        return keyStore;
    }

    private static Path writePem(Path file, String type, byte[] der) throws IOException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return Files.writeString(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n");
    }

    /** The keytool of the JDK running this. */
    private static void keytool(String... arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // A short-lived JVM: the quick compiler is all it needs.
        command.add("-J-XX:TieredStopAtLevel=1");
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (process.waitFor() != 0) {
                throw new IOException("keytool " + arguments[0] + " failed: " + output.strip());
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for keytool", e);
        }
    }

    @Override
    public void close() {
        delete(directory);
    }

    private static void delete(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            System.err.println("test certificates not deleted from " + directory + ": " + e);
        }
    }
}
