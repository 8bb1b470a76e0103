package dev.runner.bench.coldstart;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A local Lambda Runtime API (the 2018-06-01 interface the runtime interface client polls): it
 * hands out the events of one {@link Session} to whichever process asks, one at a time, and
 * notes when each request arrives (System.nanoTime, comparable with the JVM's {@code tn} log
 * decoration). Once a session's events are served, {@code next} blocks until the session ends,
 * as Lambda freezes an idle environment. A SnapStart init ends with {@code /restore/next}: the
 * session's checkpoint runs (the harness snapshots and restores the process) before it is answered,
 * as Lambda answers it only in a restored environment. It also takes the CloudFormation answer
 * MigrateFunction PUTs to its ResponseURL ({@code /cfn-response}).
 */
final class RuntimeApi implements AutoCloseable {

    private static final String PREFIX = "/2018-06-01/runtime/";

    /** What the function answered to one event; {@code error} when it reported an invocation error. */
    record Answer(String requestId, boolean error, String body, long handedOutNanos, long answeredNanos) {}

    /** The events one process gets, and what it did with them. */
    static final class Session {
        private final List<String> events;
        private final String functionArn;
        private final long timeoutMs;
        private final List<Answer> answers = new ArrayList<>();
        private final CountDownLatch answered;
        private final CountDownLatch ended = new CountDownLatch(1);
        private int served;
        private long firstNextNanos;
        private long checkpointNanos;
        private long restoredNanos;
        private final CountDownLatch checkpointEnded = new CountDownLatch(1);
        private long[] handedOut;
        private String initError;
        private Runnable onFirstNext = () -> {};
        private Runnable onFirstAnswer = () -> {};
        private Runnable checkpoint = () -> {
            throw new IllegalStateException("a SnapStart init, and no checkpoint set for this session");
        };

        Session(List<String> events, String functionArn, long timeoutMs) {
            this.events = List.copyOf(events);
            this.functionArn = functionArn;
            this.timeoutMs = timeoutMs;
            this.answered = new CountDownLatch(events.size());
            this.handedOut = new long[events.size()];
        }

        /** Waits until every event is answered or the init failed; false on timeout. */
        boolean await(long timeout, TimeUnit unit) throws InterruptedException {
            long deadline = System.nanoTime() + unit.toNanos(timeout);
            while (System.nanoTime() < deadline) {
                if (answered.await(20, TimeUnit.MILLISECONDS)) {
                    return true;
                }
                synchronized (this) {
                    if (initError != null) {
                        return true;
                    }
                }
            }
            return false;
        }

        /** Runs when the process first asks for an event (its init is done) and when it first answers. */
        synchronized void watch(Runnable firstNext, Runnable firstAnswer) {
            this.onFirstNext = firstNext;
            this.onFirstAnswer = firstAnswer;
        }

        /** Runs when a SnapStart init asks for {@code /restore/next}; returns once the process is restored. */
        synchronized void checkpointWith(Runnable checkpointAndRestore) {
            this.checkpoint = checkpointAndRestore;
        }

        /** When a SnapStart init asked for {@code /restore/next} (its hooks had run), and when it was restored; 0 if not. */
        synchronized long checkpointNanos() {
            return checkpointNanos;
        }

        synchronized long restoredNanos() {
            return restoredNanos;
        }

        /** When the process first asked for an event: the end of its init phase, as Lambda counts it. */
        synchronized long firstNextNanos() {
            return firstNextNanos;
        }

        synchronized List<Answer> answers() {
            return List.copyOf(answers);
        }

        synchronized String initError() {
            return initError;
        }

        void end() {
            ended.countDown();
        }

        private synchronized int take(long now) {
            if (firstNextNanos == 0) {
                firstNextNanos = now;
                onFirstNext.run();
            }
            if (served >= events.size()) {
                return -1;
            }
            handedOut[served] = now;
            return served++;
        }

        private synchronized void answer(String requestId, boolean error, String body, long now) {
            int index = Integer.parseInt(requestId.substring(requestId.lastIndexOf('-') + 1));
            if (answers.isEmpty()) {
                onFirstAnswer.run();
            }
            answers.add(new Answer(requestId, error, body, handedOut[index], now));
            answered.countDown();
        }

        private synchronized void initFailed(String body) {
            initError = body;
        }

        private void checkpoint(long now) {
            Runnable run;
            synchronized (this) {
                checkpointNanos = now;
                run = checkpoint;
            }
            try {
                run.run();
                synchronized (this) {
                    restoredNanos = System.nanoTime();
                }
            } finally {
                checkpointEnded.countDown();
            }
        }

        /**
         * Waits for a checkpoint under way to end (restored or failed), so a start that timed out
         * does not leave a process restored after it, polling the next session; true if none runs.
         */
        boolean awaitCheckpoint(Duration timeout) throws InterruptedException {
            synchronized (this) {
                if (checkpointNanos == 0) {
                    return true;
                }
            }
            return checkpointEnded.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private final HttpServer server;
    private volatile Session session;

    private RuntimeApi() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext(PREFIX, this::runtime);
        server.createContext("/cfn-response", exchange -> {
            exchange.getRequestBody().readAllBytes();
            send(exchange, 200, new byte[0]);
        });
        server.start();
    }

    static RuntimeApi start() {
        try {
            return new RuntimeApi();
        } catch (IOException e) {
            throw new IllegalStateException("runtime API did not start: " + e.getMessage(), e);
        }
    }

    /** host:port, what AWS_LAMBDA_RUNTIME_API holds. */
    String address() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    /** Where MigrateFunction's CloudFormation answer goes instead of S3. */
    String cfnResponseUrl() {
        return "http://" + address() + "/cfn-response";
    }

    /** Serves these events to the next process until the session ends. One session at a time. */
    Session open(List<String> events, String functionArn, long timeoutMs) {
        Session opened = new Session(events, functionArn, timeoutMs);
        session = opened;
        return opened;
    }

    private void runtime(HttpExchange exchange) throws IOException {
        long now = System.nanoTime();
        String path = exchange.getRequestURI().getPath().substring(PREFIX.length());
        byte[] body = exchange.getRequestBody().readAllBytes();
        Session current = session;
        if (current == null) {
            send(exchange, 500, "no session".getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (path.equals("invocation/next") && exchange.getRequestMethod().equals("GET")) {
            next(exchange, current, now);
        } else if (path.startsWith("invocation/") && path.endsWith("/response")) {
            current.answer(path.substring("invocation/".length(), path.length() - "/response".length()), false,
                    new String(body, StandardCharsets.UTF_8), now);
            send(exchange, 202, new byte[0]);
        } else if (path.startsWith("invocation/") && path.endsWith("/error")) {
            current.answer(path.substring("invocation/".length(), path.length() - "/error".length()), true,
                    new String(body, StandardCharsets.UTF_8), now);
            send(exchange, 202, new byte[0]);
        } else if (path.equals("restore/next") && exchange.getRequestMethod().equals("GET")) {
            try {
                current.checkpoint(now);
            } catch (RuntimeException e) {
                current.initFailed("checkpoint failed: " + e.getMessage());
                send(exchange, 500, new byte[0]);
                return;
            }
            send(exchange, 200, new byte[0]);
        } else if (path.equals("init/error") || path.equals("restore/error")) {
            current.initFailed(new String(body, StandardCharsets.UTF_8));
            send(exchange, 202, new byte[0]);
        } else {
            send(exchange, 404, ("unknown runtime API path " + path).getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void next(HttpExchange exchange, Session current, long now) throws IOException {
        int index = current.take(now);
        if (index < 0) {
            try {
                current.ended.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
            return;
        }
        String requestId = UUID.randomUUID() + "-" + index;
        var headers = exchange.getResponseHeaders();
        headers.set("Content-Type", "application/json");
        headers.set("Lambda-Runtime-Aws-Request-Id", requestId);
        headers.set("Lambda-Runtime-Deadline-Ms", Long.toString(System.currentTimeMillis() + current.timeoutMs));
        headers.set("Lambda-Runtime-Invoked-Function-Arn", current.functionArn);
        headers.set("Lambda-Runtime-Trace-Id", "Root=1-" + Long.toHexString(System.currentTimeMillis() / 1000)
                + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 24) + ";Parent=" + "0".repeat(16) + ";Sampled=0");
        send(exchange, 200, current.events.get(index).getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            exchange.getResponseBody().write(body);
        }
        exchange.close();
    }

    @Override
    public void close() {
        Session current = session;
        if (current != null) {
            current.end();
        }
        server.stop(0);
    }
}
