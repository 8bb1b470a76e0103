package dev.runner.app;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The role's credentials under SnapStart: read from the container credentials endpoint at the
 * first call (with its token), kept while valid, and read again after {@link RoleCredentials#forget},
 * which a SnapStart checkpoint calls, so no environment restored from a snapshot signs with what
 * init read.
 */
class RoleCredentialsTest {

    @Test
    void readAtFirstUseKeptAndReadAgainOnceForgotten() throws IOException {
        assumeTrue(System.getenv("AWS_ACCESS_KEY_ID") == null && System.getenv("AWS_PROFILE") == null,
                "the default chain would find this machine's own credentials first");
        List<String> tokens = new CopyOnWriteArrayList<>();
        HttpServer endpoint = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        endpoint.createContext("/credentials", exchange -> {
            tokens.add(exchange.getRequestHeaders().getFirst("Authorization"));
            byte[] body = ("{\"AccessKeyId\":\"ASIA" + tokens.size() + "\",\"SecretAccessKey\":\"secret\",\"Token\":\"session\","
                    + "\"Expiration\":\"" + Instant.now().plus(6, ChronoUnit.HOURS).truncatedTo(ChronoUnit.SECONDS) + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        endpoint.start();
        System.setProperty("aws.containerCredentialsFullUri", "http://127.0.0.1:" + endpoint.getAddress().getPort() + "/credentials");
        System.setProperty("aws.containerAuthorizationToken", "lambda-token");
        try (RoleCredentials credentials = new RoleCredentials()) {
            assertEquals(List.of(), tokens, "nothing read before the first call");

            assertEquals("ASIA1", credentials.resolveCredentials().accessKeyId());
            assertEquals("ASIA1", credentials.resolveCredentials().accessKeyId());
            assertEquals(List.of("lambda-token"), tokens, "read once, with the endpoint's token, then kept");

            credentials.forget();
            assertEquals(1, tokens.size(), "forgetting reads nothing");
            assertEquals("ASIA2", credentials.resolveCredentials().accessKeyId());
        } finally {
            System.clearProperty("aws.containerCredentialsFullUri");
            System.clearProperty("aws.containerAuthorizationToken");
            endpoint.stop(0);
        }
    }
}
