package dev.runner.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.cost.CostTracker;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.HandlerUrlPolicy;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What one {@code /process-batch} call of 10 items costs in CPU: through Runner's {@link HandlerClient}
 * (Apache HttpClient 5, with the URL's check, the deadline and the limits), and as a bare blocking
 * HTTP/1.1 exchange on one kept-alive socket that builds, signs and parses the same bodies (the floor:
 * no check, no deadline, no limits, no thread of its own). Both against the test handler service in this JVM, whose share
 * is in both figures; rounds alternate, so a drifting machine slows both alike. Prints, asserts
 * nothing.
 *
 * <pre>java -XX:TieredStopAtLevel=1 -cp bench/target/runner-bench.jar dev.runner.bench.HandlerCallCost [calls per round]</pre>
 */
public final class HandlerCallCost {

    private HandlerCallCost() {}

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        String secret = "bench-call-secret";
        FakeHandler handlers = FakeHandler.start(secret);
        HandlerClient client = new HandlerClient(secret, HandlerUrlPolicy.parse("127.0.0.0/8,::1/128"), Clock.systemUTC(), CostTracker.NONE);
        ObjectNode type = Json.object().put("url", handlers.url("batch")).put("direction", "inbound").put("batch", true);
        type.putObject("configs").put("batch_size", 10);
        HandlerSpec spec = HandlerSpec.fromJson("batch", type);
        List<ObjectNode> items = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String id = UUID.randomUUID().toString();
            ids.add(id);
            items.add(Json.object().put("itemId", id).put("externalId", "e-" + i).set("payload", Json.object().put("i", i)));
        }
        var bare = new BareExchange(spec.endpoint("process-batch"), secret);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        System.out.printf("CPU per /process-batch call of 10 items, %d calls a round, one at a time on a virtual thread (the handler service's share included in both):%n", calls);
        for (int round = 0; round < 6; round++) {
            boolean viaClient = round % 2 == 0;
            long cpu = os.getProcessCpuTime();
            long start = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                Thread.ofVirtual().start(() -> {
                    if (viaClient) {
                        client.processBatch("bench", spec, items, ids, Duration.ofSeconds(5));
                    } else {
                        bare.processBatch(items, ids);
                    }
                }).join();
            }
            System.out.printf("  %-42s %7.1f us CPU, %7.1f us wall%s%n", viaClient ? "HandlerClient" : "bare HTTP/1.1 exchange, kept-alive socket",
                    (os.getProcessCpuTime() - cpu) / 1e3 / calls, (System.nanoTime() - start) / 1e3 / calls, round < 2 ? "  (warming up)" : "");
        }
        System.exit(0);
    }

    /** The same request, signed the same way, its answer read and parsed; one exchange at a time. */
    private static final class BareExchange {
        private final URI uri;
        private final String secret;
        private Socket socket;
        private InputStream in;

        BareExchange(URI uri, String secret) {
            this.uri = uri;
            this.secret = secret;
        }

        void processBatch(List<ObjectNode> items, List<String> ids) {
            try {
                ObjectNode request = Json.object();
                request.putArray("items").addAll(items);
                byte[] body = Json.writeBytes(request);
                Map<String, String> signature = StandardWebhooks.headers(List.of(secret), "msg_" + UUID.randomUUID(),
                        System.currentTimeMillis() / 1000, body);
                if (socket == null) {
                    socket = new Socket(uri.getHost(), uri.getPort());
                    socket.setTcpNoDelay(true);
                    in = new BufferedInputStream(socket.getInputStream());
                }
                StringBuilder head = new StringBuilder("POST ").append(uri.getRawPath()).append(" HTTP/1.1\r\nHost: ")
                        .append(uri.getHost()).append(':').append(uri.getPort())
                        .append("\r\nContent-Type: application/json\r\nContent-Length: ").append(body.length)
                        .append("\r\nIdempotency-Key: ").append(String.join(",", ids)).append("\r\n");
                signature.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
                byte[] headBytes = head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
                OutputStream out = socket.getOutputStream();
                byte[] message = new byte[headBytes.length + body.length];
                System.arraycopy(headBytes, 0, message, 0, headBytes.length);
                System.arraycopy(body, 0, message, headBytes.length, body.length);
                out.write(message);
                out.flush();
                int status = -1;
                int length = 0;
                for (String line = readLine(); !line.isEmpty(); line = readLine()) {
                    if (status < 0) {
                        status = Integer.parseInt(line.substring(9, 12));
                    } else if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
                        length = Integer.parseInt(line.substring(15).trim());
                    }
                }
                byte[] answer = in.readNBytes(length);
                if (status != 200 || !Json.parse(answer).path("results").isArray()) {
                    throw new IllegalStateException("the handler answered " + status);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private String readLine() throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }
    }
}
