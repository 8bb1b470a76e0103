package dev.runner.functions;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The SDK's priming makes its two calls to its own canned server and nothing else: with every
 * setting the SDK reads for real endpoints and credentials (the SQS and Secrets Manager endpoints,
 * the container credentials endpoint) pointed at a server that records what reaches it, that
 * server is never called.
 */
class AwsSdkPrimingTest {

    private static final List<String> SETTINGS = List.of("aws.endpointUrl", "aws.endpointUrlSqs", "aws.endpointUrlSecretsManager",
            "aws.containerCredentialsFullUri");

    @Test
    void primingCallsOnlyItsOwnServer() throws IOException {
        List<String> strayRequests = new CopyOnWriteArrayList<>();
        HttpServer realEndpoints = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        realEndpoints.createContext("/", exchange -> {
            strayRequests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + exchange.getRequestHeaders().getFirst("X-Amz-Target"));
            exchange.sendResponseHeaders(500, -1);
            exchange.close();
        });
        realEndpoints.start();
        String real = "http://127.0.0.1:" + realEndpoints.getAddress().getPort();
        Map<String, String> before = new java.util.HashMap<>();
        SETTINGS.forEach(name -> before.put(name, System.getProperty(name)));
        try {
            SETTINGS.forEach(name -> System.setProperty(name, name.equals("aws.containerCredentialsFullUri") ? real + "/credentials" : real));

            assertEquals(2, AwsSdkPriming.prime(true), "SendMessageBatch and GetSecretValue, each answered by the canned server");
            assertEquals(1, AwsSdkPriming.prime(false), "GetSecretValue only, for a function whose main path sends nothing");
            assertEquals(List.of(), strayRequests, "nothing reached a real endpoint or the credentials endpoint");
        } finally {
            before.forEach((name, value) -> {
                if (value == null) {
                    System.clearProperty(name);
                } else {
                    System.setProperty(name, value);
                }
            });
            realEndpoints.stop(0);
        }
    }

    /** The deployment package is the runtime classpath: the SDK's Apache and Netty clients must not be on it. */
    @Test
    void theSdksOnlyHttpClientIsTheUrlConnectionOne() {
        for (String client : List.of("software.amazon.awssdk.http.apache.ApacheHttpClient",
                "software.amazon.awssdk.http.apache5.Apache5HttpClient", "software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient")) {
            assertThrows(ClassNotFoundException.class, () -> Class.forName(client), client + " is on the functions' classpath");
        }
    }
}
