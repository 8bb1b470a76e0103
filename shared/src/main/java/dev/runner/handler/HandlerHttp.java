package dev.runner.handler;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * HTTP/1.1 POSTs to handlers over blocking sockets, connections kept alive per handler host: the
 * transport under {@link HandlerClient}, which screens every URL and passes the addresses it accepted.
 * This connects to those addresses and no other (it looks no name up, so a name cannot be rebound
 * between the check and the connection), checks the certificate against the host name (SNI and HTTPS
 * identification), reads no more of a body than the caller allows, and can be stopped at any stage by
 * {@link Call#abandon}, which closes the socket under a blocked connect, handshake, write or read.
 *
 * <p>Why not the JDK's clients: {@code java.net.http.HttpClient} resolves names itself (an address
 * cannot be pinned) and spends more CPU on a call's plumbing (a filter chain per exchange, hand-offs
 * to its selector thread) than a 10-item call's own work; {@code HttpURLConnection} keeps five idle
 * connections per host, re-sends a POST on its own and probes a kept-alive connection with a 1 ms
 * read before a streamed body. What handlers need of HTTP/1.1 is small: one POST, an answer framed
 * by {@code Content-Length}, chunks or the connection's end.
 */
final class HandlerHttp {

    /** Connecting waits at most this long, whatever time the call has left. */
    static final int CONNECT_TIMEOUT_MS = 5_000;
    /**
     * An idle connection older than this is closed, not reused: below the idle timeouts of the NAT
     * gateways and load balancers in front of handlers (350 s, 60 s), which drop a connection
     * without telling either end, and past a Lambda freeze between invocations.
     */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Kept per handler host: more lanes than this calling one host at once open connections of their own. */
    static final int IDLE_PER_HOST = 64;
    /** Kept in all, well inside Lambda's 1,024 file descriptors, which Postgres, Redis and SQS share. */
    static final int IDLE_LIMIT = 256;
    /** How often every host's idle connections are swept, at most. */
    private static final Duration SWEEP_EVERY = Duration.ofSeconds(5);
    /** An answer's status line and headers (and a chunked body's trailers), all told. */
    static final int HEAD_LIMIT = 64 * 1024;
    /** A chunk's size line, extensions included. */
    static final int CHUNK_LINE_LIMIT = 4 * 1024;
    private static final int INTERIM_ANSWERS_LIMIT = 8;
    private static final int BUFFER = 16 * 1024;

    /** Where a call goes: the handler's host as named (for Host, SNI and the certificate) and the addresses screened for it. */
    record Target(boolean tls, String host, int port, List<InetAddress> addresses) {
        Target {
            addresses = List.copyOf(addresses);
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("a handler target needs at least one screened address");
            }
        }

        /** A handler URL's target: its scheme, its host as the URL writes it, its port or the scheme's. */
        static Target of(URI url, List<InetAddress> addresses) {
            boolean tls = "https".equalsIgnoreCase(url.getScheme());
            return new Target(tls, url.getHost(), url.getPort() >= 0 ? url.getPort() : defaultPort(tls), addresses);
        }

        /** Host names are case-insensitive and may end in the root's dot; the port is always written out. */
        String key() {
            return (tls ? "https://" : "http://") + bareHost().toLowerCase(Locale.ROOT) + ":" + port;
        }

        /** The host as TLS names it: without an IPv6 literal's brackets or a name's final dot. */
        String bareHost() {
            String name = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
            return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        }
    }

    /** The connection was not accepted within {@link #CONNECT_TIMEOUT_MS}. */
    static final class ConnectTimeout extends IOException {
        ConnectTimeout(String message) {
            super(message);
        }
    }

    /** The handler answered something that is not HTTP/1.1, or beyond this client's limits. */
    static final class MalformedAnswer extends IOException {
        MalformedAnswer(String message) {
            super(message);
        }
    }

    private final SSLSocketFactory tls;
    /**
     * Idle connections per handler host, the newest last. A connection is taken from the top only if it
     * is younger than the idle timeout, goes to an address the call's check accepted, and shows no close
     * or unasked-for bytes. Aged ones are closed as they reach the bottom of their host's pile, and
     * every pile is swept every few seconds: neither a pile whose top stays warm nor a host no longer
     * called keeps the sockets its handler closed.
     */
    private final Map<String, ArrayDeque<Connection>> idle = new ConcurrentHashMap<>();
    private final AtomicInteger idleCount = new AtomicInteger();
    private final long idleTimeoutNanos;
    private final long sweepEveryNanos;
    private final AtomicLong nextSweep;

    HandlerHttp(SSLContext tls) {
        this(tls, IDLE_TIMEOUT);
    }

    HandlerHttp(SSLContext tls, Duration idleTimeout) {
        this.tls = tls.getSocketFactory();
        this.idleTimeoutNanos = idleTimeout.toNanos();
        this.sweepEveryNanos = Math.min(SWEEP_EVERY.toNanos(), idleTimeoutNanos);
        this.nextSweep = new AtomicLong(System.nanoTime() + sweepEveryNanos);
    }

    /**
     * One POST, answered. A {@code replayable} call (one that carries an Idempotency-Key: item calls)
     * that went out on a kept-alive connection which then ended before any byte of an answer is sent
     * once more on a new connection, as Go's client does for such requests: mostly a connection the
     * handler closed while idle as the call crossed it, but possibly one whose handler took the call and
     * died before answering, which is why only calls the handler can recognise are sent again.
     * {@code request} is asked again for the second send, which is signed anew (a handler that remembers
     * the message ids it took must not take it for a replay). A {@code 408} answered on a kept-alive
     * connection counts as such an end: servers (nginx, Apache, load balancers) write one when they time
     * out a connection left idle, and the call that crossed it was not taken (RFC 9110 15.5.9 lets it be
     * repeated on a new connection). Chromium sends any call again on that 408; Go's client, which reads
     * idle connections, drops one a 408 arrives on, as {@code stillOpen} does here. A call on a new
     * connection, or one whose answer had begun otherwise, is never sent twice.
     *
     * @param bodyLimit what may be read of a body, by status; past it the connection is dropped
     */
    HandlerAnswers.Reply post(Target target, Supplier<byte[]> request, boolean replayable, IntUnaryOperator bodyLimit, Call call) throws IOException {
        Connection reused = takeIdle(target);
        if (reused != null) {
            call.attach(reused);
            try {
                HandlerAnswers.Reply answer = exchange(reused, request.get(), bodyLimit, call);
                if (!replayable || answer.status() != 408) {
                    return answer;
                }
            } catch (IOException e) {
                reused.close();
                if (!replayable || reused.answerStarted || call.abandoned()) {
                    throw e;
                }
            }
        }
        Connection fresh = connect(target, call);
        try {
            return exchange(fresh, request.get(), bodyLimit, call);
        } catch (IOException | RuntimeException e) {
            fresh.close();
            throw e;
        }
    }

    private HandlerAnswers.Reply exchange(Connection connection, byte[] request, IntUnaryOperator bodyLimit, Call call) throws IOException {
        connection.answerStarted = false;
        HandlerAnswers.Reply answer;
        try {
            connection.out.write(request);
            connection.out.flush();
            answer = connection.readAnswer(bodyLimit);
        } catch (IOException writeOrRead) {
            // A handler may answer a request it refuses (413, 401) before reading all of it, and close: the write then fails,
            // but its answer, already here, is the call's outcome. Anything else is the failure it was.
            answer = connection.answerAfterFailedWrite(bodyLimit).orElseThrow(() -> writeOrRead);
        }
        call.detach();
        if (connection.reusable) {
            giveBack(connection);
        } else {
            connection.close();
        }
        return answer;
    }

    /** Closes every idle connection; calls made later connect again. */
    void closeIdle() {
        idle.values().forEach(connections -> closeFromBottom(connections, connection -> true));
    }

    private Connection takeIdle(Target target) {
        ArrayDeque<Connection> connections = idle.get(target.key());
        if (connections == null) {
            return null;
        }
        long now = System.nanoTime();
        while (true) {
            Connection connection;
            synchronized (connections) {
                connection = connections.pollLast();
            }
            if (connection == null) {
                return null;
            }
            idleCount.decrementAndGet();
            if (!agedOut(connection, now) && target.addresses().contains(connection.address) && connection.stillOpen()) {
                return connection;
            }
            connection.close();
        }
    }

    private void giveBack(Connection connection) {
        long now = System.nanoTime();
        connection.idleSince = now;
        if (idleCount.incrementAndGet() > IDLE_LIMIT) {
            idleCount.decrementAndGet();
            connection.close();
        } else {
            ArrayDeque<Connection> connections = idle.computeIfAbsent(connection.key, key -> new ArrayDeque<>());
            synchronized (connections) {
                connections.addLast(connection);
            }
            closeFromBottom(connections, bottom -> agedOut(bottom, now) || connections.size() > IDLE_PER_HOST);
        }
        long due = nextSweep.get();
        if (now - due >= 0 && nextSweep.compareAndSet(due, now + sweepEveryNanos)) {
            idle.values().forEach(pile -> closeFromBottom(pile, bottom -> agedOut(bottom, now)));
        }
    }

    private boolean agedOut(Connection connection, long now) {
        return now - connection.idleSince >= idleTimeoutNanos;
    }

    /** Closes connections from the bottom of a pile (the longest idle) while {@code close} says so. */
    private void closeFromBottom(ArrayDeque<Connection> connections, Predicate<Connection> close) {
        List<Connection> closing = new ArrayList<>();
        synchronized (connections) {
            while (!connections.isEmpty() && close.test(connections.peekFirst())) {
                closing.add(connections.pollFirst());
            }
        }
        idleCount.addAndGet(-closing.size());
        closing.forEach(Connection::close);
    }

    /** The screened addresses in turn until one accepts; TLS is set up on the socket of the address that did. */
    private Connection connect(Target target, Call call) throws IOException {
        IOException failed = null;
        for (InetAddress address : target.addresses()) {
            SocketChannel channel = SocketChannel.open();
            Connection connection = new Connection(target.key(), address, channel);
            call.attach(connection);
            try {
                Socket socket = channel.socket();
                socket.connect(new InetSocketAddress(address, target.port()), CONNECT_TIMEOUT_MS);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                connection.open(target.tls() ? handshake(socket, target) : socket);
                return connection;
            } catch (SocketTimeoutException e) {
                connection.close();
                failed = new ConnectTimeout("handler did not accept a connection within " + CONNECT_TIMEOUT_MS / 1000 + " s");
            } catch (IOException e) {
                connection.close();
                if (call.abandoned()) {
                    throw e;
                }
                failed = e;
            }
        }
        throw failed;
    }

    private SSLSocket handshake(Socket socket, Target target) throws IOException {
        String host = target.bareHost();
        SSLSocket ssl = (SSLSocket) tls.createSocket(socket, host, target.port(), true);
        SSLParameters parameters = ssl.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        if (!isAddressLiteral(host)) {
            parameters.setServerNames(List.of(new SNIHostName(host)));
        }
        ssl.setSSLParameters(parameters);
        ssl.startHandshake();
        return ssl;
    }

    private static boolean isAddressLiteral(String host) {
        return host.indexOf(':') >= 0 || host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
    }

    /** The head of a POST; the body follows it in the same write, so that a small call goes out in one segment. */
    static byte[] request(Target target, String pathAndQuery, Map<String, String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(256 + 64 * headers.size())
                .append("POST ").append(pathAndQuery).append(" HTTP/1.1\r\nHost: ").append(hostHeader(target)).append("\r\n");
        headers.forEach((name, value) -> head.append(name).append(": ").append(requireFieldValue(name, value)).append("\r\n"));
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] bytes = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, bytes, 0, headBytes.length);
        System.arraycopy(body, 0, bytes, headBytes.length, body.length);
        return bytes;
    }

    /** The host as the URL names it (an IPv6 literal in its brackets), with the port unless it is the scheme's. */
    private static String hostHeader(Target target) {
        return target.port() == defaultPort(target.tls()) ? target.host() : target.host() + ":" + target.port();
    }

    private static int defaultPort(boolean tls) {
        return tls ? 443 : 80;
    }

    /** Header values are Runner's own (signatures, ids); a line break in one would be a bug that splits the request. */
    private static String requireFieldValue(String name, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\r' || c == '\n' || c > 0xFF) {
                throw new IllegalArgumentException("header " + name + " has a character HTTP cannot carry at " + i);
            }
        }
        return value;
    }

    /**
     * One call's hold on the connection it is using, so that its deadline, on another thread, can
     * close it. Closing the channel (not the TLS socket, whose close may wait for the reader) ends
     * whatever the call's thread is blocked in.
     */
    static final class Call {
        private boolean abandoned;
        private Connection connection;

        void attach(Connection connection) throws InterruptedIOException {
            boolean late;
            synchronized (this) {
                late = abandoned;
                this.connection = late ? null : connection;
            }
            if (late) {
                connection.close();
                throw new InterruptedIOException("handler call abandoned");
            }
        }

        synchronized void detach() {
            connection = null;
        }

        synchronized boolean abandoned() {
            return abandoned;
        }

        void abandon() {
            Connection open;
            synchronized (this) {
                abandoned = true;
                open = connection;
                connection = null;
            }
            if (open != null) {
                open.close();
            }
        }
    }

    /** A socket and what is read ahead of it. Used by one call at a time. */
    static final class Connection {
        private final String key;
        /** The address connected to: a connection is reused only for a call whose check accepted it. */
        private final InetAddress address;
        private final SocketChannel channel;
        private InputStream in;
        private OutputStream out;
        private final byte[] buffer = new byte[BUFFER];
        private int position;
        private int end;
        private long idleSince;
        /** Set by the first byte of an answer: from then on, a failure is not a reason to send again. */
        private boolean answerStarted;
        /** The last answer was read to its framed end, on HTTP/1.1, and the handler did not ask to close. */
        private boolean reusable;
        private int headBytes;

        private Connection(String key, InetAddress address, SocketChannel channel) {
            this.key = key;
            this.address = address;
            this.channel = channel;
        }



        private void open(Socket socket) throws IOException {
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        /**
         * Whether an idle connection can carry a call: not closed by the handler, and nothing unasked-for
         * waiting on it. A non-blocking read of the socket: -1 is the handler's close, a byte is either a
         * close in TLS (an alert) or garbage; both end the connection.
         */
        private boolean stillOpen() {
            if (position < end) {
                return false;
            }
            try {
                channel.configureBlocking(false);
                int read = channel.read(ByteBuffer.allocate(1));
                channel.configureBlocking(true);
                return read == 0;
            } catch (IOException e) {
                return false;
            }
        }

        void close() {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closed either way
            }
        }

        /** An answer that arrived whole before a write failed; empty when none had begun (or it is not whole). */
        private Optional<HandlerAnswers.Reply> answerAfterFailedWrite(IntUnaryOperator bodyLimit) {
            if (answerStarted || !channel.isOpen()) {
                return Optional.empty();
            }
            try {
                HandlerAnswers.Reply answer = readAnswer(bodyLimit);
                reusable = false;
                return Optional.of(answer);
            } catch (IOException e) {
                return Optional.empty();
            }
        }

        private HandlerAnswers.Reply readAnswer(IntUnaryOperator bodyLimit) throws IOException {
            reusable = false;
            headBytes = 0;
            Head head = readHead();
            for (int interim = 0; head.status() >= 100 && head.status() < 200; interim++) {
                // 100 Continue and 103 Early Hints come before the answer; anything else in 1xx is not one Runner asked for.
                if (head.status() == 101 || interim == INTERIM_ANSWERS_LIMIT) {
                    throw new MalformedAnswer("handler answered " + head.status() + " instead of an answer");
                }
                head = readHead();
            }
            int limit = Math.max(0, bodyLimit.applyAsInt(head.status()));
            Body body;
            boolean framed = true;
            if (head.status() == 204 || head.status() == 304) {
                body = new Body(new byte[0], false);
            } else if (head.chunked()) {
                body = readChunked(limit);
            } else if (head.contentLength() >= 0) {
                body = readLength(head.contentLength(), limit);
            } else {
                body = readToEnd(limit);
                framed = false;
            }
            // After a 408 the handler stopped reading the request: what it left of it may still be on the connection.
            reusable = framed && !body.overLimit() && head.keepAlive() && position == end && head.status() != 408;
            return new HandlerAnswers.Reply(head.status(), head.retryAfter(), body.bytes(), body.overLimit());
        }

        private record Body(byte[] bytes, boolean overLimit) {}

        /**
         * @param contentLength -1 when absent or when the answer is chunked
         * @param keepAlive     HTTP/1.1, no {@code Connection: close}, and not both chunked and sized (RFC 9112 6.3: the
         *                      length is ignored and the connection not reused)
         */
        private record Head(int status, String retryAfter, long contentLength, boolean chunked, boolean keepAlive) {}

        private Head readHead() throws IOException {
            String statusLine = readLine();
            if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12 || statusLine.charAt(8) != ' '
                    || (statusLine.length() > 12 && statusLine.charAt(12) != ' ')) {
                throw new MalformedAnswer("handler's answer does not start with an HTTP/1.x status line");
            }
            int status = parseStatus(statusLine.substring(9, 12));
            boolean keepAlive = statusLine.charAt(7) == '1';
            String retryAfter = null;
            long contentLength = -1;
            boolean chunked = false;
            for (String line = readLine(); !line.isEmpty(); line = readLine()) {
                int colon = line.indexOf(':');
                if (colon <= 0 || !isToken(line, colon)) {
                    // A folded line, a space before the colon, a name with other characters: each read one way here and
                    // another by some other parser, which is how answers are smuggled.
                    throw new MalformedAnswer("handler's answer has a malformed header line");
                }
                String name = line.substring(0, colon).toLowerCase(Locale.ROOT);
                String value = line.substring(colon + 1).strip();
                switch (name) {
                    case "content-length" -> contentLength = parseLength(value, contentLength);
                    case "transfer-encoding" -> {
                        // Runner sends no TE header, so chunked is the one transfer coding a handler may use (RFC 9112 7).
                        if (chunked || !value.equalsIgnoreCase("chunked")) {
                            throw new MalformedAnswer("handler's Transfer-Encoding is not chunked");
                        }
                        chunked = true;
                    }
                    case "connection" -> keepAlive &= !value.toLowerCase(Locale.ROOT).contains("close");
                    case "retry-after" -> retryAfter = retryAfter == null ? value : retryAfter;
                    default -> {
                        // not needed
                    }
                }
            }
            return new Head(status, retryAfter, chunked ? -1 : contentLength, chunked, keepAlive && !(chunked && contentLength >= 0));
        }

        /** RFC 9110's token: the characters a header name may hold. */
        private static boolean isToken(String text, int length) {
            for (int i = 0; i < length; i++) {
                char c = text.charAt(i);
                boolean tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
                if (!tchar) {
                    return false;
                }
            }
            return true;
        }

        private static int parseStatus(String digits) throws MalformedAnswer {
            for (int i = 0; i < 3; i++) {
                if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                    throw new MalformedAnswer("handler's status is not three digits");
                }
            }
            return Integer.parseInt(digits);
        }

        /** Repeated Content-Length fields (or a list in one) must agree: a disagreement is how responses are smuggled. */
        private static long parseLength(String value, long earlier) throws MalformedAnswer {
            long length = -1;
            for (String part : value.split(",", -1)) {
                String digits = part.strip();
                if (digits.isEmpty() || digits.length() > 18 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    throw new MalformedAnswer("handler's Content-Length is not a number");
                }
                long parsed = Long.parseLong(digits);
                if ((length >= 0 && parsed != length) || (earlier >= 0 && parsed != earlier)) {
                    throw new MalformedAnswer("handler's answer has Content-Length fields that disagree");
                }
                length = parsed;
            }
            return length;
        }

        private Body readLength(long length, int limit) throws IOException {
            if (length > limit) {
                return new Body(readUpTo(limit), true);
            }
            byte[] body = new byte[(int) length];
            int read = 0;
            while (read < body.length) {
                if (position == end && !fill()) {
                    throw new EOFException("handler closed the connection " + read + " bytes into a " + length + "-byte answer");
                }
                int n = Math.min(end - position, body.length - read);
                System.arraycopy(buffer, position, body, read, n);
                position += n;
                read += n;
            }
            return new Body(body, false);
        }

        /** What is already here, up to the limit: an answer announced too long is not waited for. */
        private byte[] readUpTo(int limit) {
            int n = Math.min(limit, end - position);
            byte[] bytes = new byte[n];
            System.arraycopy(buffer, position, bytes, 0, n);
            position += n;
            return bytes;
        }

        private Body readToEnd(int limit) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            while (position < end || fill()) {
                int n = Math.min(end - position, limit - body.size());
                body.write(buffer, position, n);
                position += n;
                if (body.size() == limit && (position < end || fill())) {
                    return new Body(body.toByteArray(), true);
                }
            }
            return new Body(body.toByteArray(), false);
        }

        private Body readChunked(int limit) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            long framing = 0;
            while (true) {
                String sizeLine = readChunkLine();
                // Framing is bounded by the data it frames (as Go's client bounds it since CVE-2023-39326): a handler
                // cannot make the client read megabytes of chunk extensions around a few bytes.
                framing += sizeLine.length() + 2;
                if (framing > HEAD_LIMIT + body.size()) {
                    throw new MalformedAnswer("handler's chunk framing is larger than the data it frames");
                }
                long size = chunkSize(sizeLine);
                if (size == 0) {
                    break;
                }
                if (body.size() + size > limit) {
                    body.write(buffer, position, (int) Math.min(end - position, Math.min(size, limit - body.size())));
                    return new Body(body.toByteArray(), true);
                }
                for (long left = size; left > 0; ) {
                    if (position == end && !fill()) {
                        throw new EOFException("handler closed the connection inside a chunk");
                    }
                    int n = (int) Math.min(end - position, left);
                    body.write(buffer, position, n);
                    position += n;
                    left -= n;
                }
                if (!readChunkLine().isEmpty()) {
                    throw new MalformedAnswer("handler's chunk is longer than its size");
                }
            }
            // Trailers, counted with the head, are read and dropped.
            while (!readLine().isEmpty()) {
                // dropped
            }
            return new Body(body.toByteArray(), false);
        }

        private static long chunkSize(String line) throws MalformedAnswer {
            int semicolon = line.indexOf(';');
            String hex = (semicolon >= 0 ? line.substring(0, semicolon) : line).strip();
            if (hex.isEmpty() || hex.length() > 15 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                throw new MalformedAnswer("handler's chunk size is not a hexadecimal number");
            }
            return Long.parseLong(hex, 16);
        }

        /** A line of the head (or the trailers), counted against the head's limit. */
        private String readLine() throws IOException {
            String line = readLine(HEAD_LIMIT - headBytes, "answer head", HEAD_LIMIT);
            headBytes += line.length() + 2;
            return line;
        }

        /** A chunk's size line, or the end of its data: each line on its own limit, so that small chunks are not counted as a head. */
        private String readChunkLine() throws IOException {
            return readLine(CHUNK_LINE_LIMIT, "chunk size line", CHUNK_LINE_LIMIT);
        }

        /** A line without its CRLF (a bare LF is taken too), at most {@code room} bytes. */
        private String readLine(int room, String what, int limit) throws IOException {
            StringBuilder line = new StringBuilder();
            while (true) {
                if (position == end && !fill()) {
                    throw new EOFException(answerStarted ? "handler closed the connection inside its answer"
                            : "handler closed the connection without answering");
                }
                int start = position;
                while (position < end && buffer[position] != '\n') {
                    position++;
                }
                int length = position - start;
                if (line.length() + length + (position < end ? 1 : 0) > room) {
                    throw new MalformedAnswer("handler's " + what + " is larger than " + (limit >= 1024 ? limit / 1024 + " KiB" : limit + " bytes"));
                }
                line.append(new String(buffer, start, length, StandardCharsets.ISO_8859_1));
                if (position < end) {
                    position++;
                    int last = line.length() - 1;
                    if (last >= 0 && line.charAt(last) == '\r') {
                        line.setLength(last);
                    }
                    return line.toString();
                }
            }
        }

        /** Reads more into the buffer: false at the end of the stream. */
        private boolean fill() throws IOException {
            int n = in.read(buffer, 0, buffer.length);
            if (n <= 0) {
                return false;
            }
            answerStarted = true;
            position = 0;
            end = n;
            return true;
        }
    }
}
