package dev.runner.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A handler service that misbehaves on purpose, over real HTTP/1.1 on loopback: each handler
 * name answers with a scripted {@link Act} (stall after the headers, a 50 MB body streamed from
 * one small buffer, any Retry-After, malformed JSON, a reset connection, a redirect). It speaks
 * over raw sockets so it can do what a well-behaved server library would not, and it records what
 * it saw: connections and requests per handler name, and how each connection ended.
 */
public final class HostileHandler implements AutoCloseable {

    /** How a handler name answers every request. */
    public sealed interface Act {

        /** A whole answer, then the connection closes. */
        record Answer(int status, Map<String, String> headers, byte[] body) implements Act {}

        /** Headers announcing {@code announcedLength} bytes, then nothing until the client goes away. */
        record StallAfterHeaders(int status, long announcedLength) implements Act {}

        /** Not even headers, until the client goes away. */
        record StallBeforeHeaders() implements Act {}

        /** {@code length} bytes of filler, streamed from one small buffer; chunked unless {@code announced}. */
        record Flood(int status, long length, boolean announced) implements Act {}

        /** Headers announcing {@code announcedLength} bytes and the first {@code sent} of them, then a TCP reset. */
        record ResetMidBody(int status, long announcedLength, byte[] sent) implements Act {}

        /** A TCP reset as soon as the request is read. */
        record ResetBeforeHeaders() implements Act {}

        static Act json(int status, String body) {
            return new Answer(status, Map.of("Content-Type", "application/json"), body.getBytes(StandardCharsets.UTF_8));
        }

        static Act bytes(int status, byte[] body) {
            return new Answer(status, Map.of("Content-Type", "application/json"), body);
        }

        static Act tooManyRequests(String retryAfter) {
            return new Answer(429, Map.of("Retry-After", retryAfter, "Content-Type", "application/json"),
                    "{\"error\":\"slow down\"}".getBytes(StandardCharsets.UTF_8));
        }

        static Act redirect(String location) {
            return new Answer(302, Map.of("Location", location, "Content-Type", "text/plain"),
                    "secret-looking redirect body".getBytes(StandardCharsets.UTF_8));
        }
    }

    /** How one connection ended: bytes of body written before it did, and whether the client closed or reset it. */
    public record Ended(String name, long bodyBytesSent, boolean closedByClient) {}

    private static final byte[] FILLER = filler();

    private final ServerSocket server;
    private final Map<String, Act> acts = new ConcurrentHashMap<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Map<String, AtomicInteger> connections = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final List<Ended> ended = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private HostileHandler() throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
        acceptor = Thread.ofVirtual().name("hostile-handler").start(this::accept);
    }

    public static HostileHandler start() {
        try {
            return new HostileHandler();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The base URL of a handler that acts so; its calls go to {@code {url}/fetch} and so on. */
    public String url(String name, Act act) {
        acts.put(name, act);
        return "http://127.0.0.1:" + port() + "/" + name;
    }

    /** Connections that sent anything, for a name (or for the unknown, under ""). */
    public int connections(String name) {
        return connections.getOrDefault(name, new AtomicInteger()).get();
    }

    /** Connections accepted at all, whatever came over them (a TLS hello, nothing). */
    public int accepted() {
        return accepted.get();
    }

    /** Requests read completely, for a name. */
    public int requests(String name) {
        return requests.getOrDefault(name, new AtomicInteger()).get();
    }

    public List<Ended> ended(String name) {
        return ended.stream().filter(e -> e.name().equals(name)).toList();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                accepted.incrementAndGet();
                Thread.ofVirtual().start(() -> serve(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        String name = "";
        long sent = 0;
        boolean closedByClient = false;
        try (socket) {
            // A guard against leaking this thread, far longer than any test's deadline.
            socket.setSoTimeout(60_000);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            String head = readHead(in);
            String path = head.split(" ", 3).length > 1 ? head.split(" ", 3)[1] : "/";
            name = path.split("/").length > 1 ? path.split("/")[1] : "";
            connections.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
            in.readNBytes(contentLength(head));
            requests.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
            Act act = acts.getOrDefault(name, Act.json(404, "{}"));
            switch (act) {
                case Act.Answer answer -> {
                    Map<String, String> headers = new LinkedHashMap<>(answer.headers());
                    headers.put("Content-Length", Integer.toString(answer.body().length));
                    writeHead(out, answer.status(), headers);
                    out.write(answer.body());
                    out.flush();
                    sent = answer.body().length;
                }
                case Act.StallAfterHeaders stall -> {
                    writeHead(out, stall.status(), Map.of("Content-Length", Long.toString(stall.announcedLength())));
                    out.flush();
                    closedByClient = waitForClient(in);
                }
                case Act.StallBeforeHeaders stall -> closedByClient = waitForClient(in);
                case Act.Flood flood -> {
                    writeHead(out, flood.status(), flood.announced()
                            ? Map.of("Content-Length", Long.toString(flood.length()))
                            : Map.of("Transfer-Encoding", "chunked"));
                    try {
                        while (sent < flood.length()) {
                            int n = (int) Math.min(FILLER.length, flood.length() - sent);
                            if (flood.announced()) {
                                out.write(FILLER, 0, n);
                            } else {
                                out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                                out.write(FILLER, 0, n);
                                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                            }
                            sent += n;
                        }
                        if (!flood.announced()) {
                            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                        }
                        out.flush();
                    } catch (IOException e) {
                        closedByClient = true;
                    }
                }
                case Act.ResetMidBody reset -> {
                    writeHead(out, reset.status(), Map.of("Content-Length", Long.toString(reset.announcedLength())));
                    out.write(reset.sent());
                    out.flush();
                    sent = reset.sent().length;
                    resetNow(socket);
                }
                case Act.ResetBeforeHeaders reset -> resetNow(socket);
            }
        } catch (IOException e) {
            closedByClient = true;
        } finally {
            ended.add(new Ended(name, sent, closedByClient));
        }
    }

    /** Blocks until the client closes or resets the connection: true then, false on this side's own timeout. */
    private static boolean waitForClient(InputStream in) {
        try {
            while (in.read() >= 0) {
                // discard whatever the client sends
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** SO_LINGER 0 makes close send RST instead of FIN. */
    private static void resetNow(Socket socket) throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("client closed before its request head ended");
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
            if (head.size() > 64 * 1024) {
                throw new IOException("request head too long");
            }
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring("content-length:".length()).strip());
            }
        }
        return 0;
    }

    private static void writeHead(OutputStream out, int status, Map<String, String> headers) throws IOException {
        StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(" Hostile\r\n");
        headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        head.append("Connection: close\r\n\r\n");
        out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    private static byte[] filler() {
        byte[] filler = new byte[64 * 1024];
        Arrays.fill(filler, (byte) ' ');
        return filler;
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        acceptor.interrupt();
    }
}
