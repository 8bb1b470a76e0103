package dev.runner.handler;

import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.DefaultConnectionKeepAliveStrategy;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.CloseableHttpResponse;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.client5.http.ssl.DefaultHostnameVerifier;
import org.apache.hc.client5.http.ssl.HostnameVerificationPolicy;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.EndpointDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.impl.DefaultConnectionReuseStrategy;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.impl.io.DefaultHttpResponseParserFactory;
import org.apache.hc.core5.http.impl.io.HttpRequestExecutor;
import org.apache.hc.core5.http.io.HttpClientConnection;
import org.apache.hc.core5.http.io.HttpResponseInformationCallback;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.message.BasicLineParser;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.pool.PoolReusePolicy;
import org.apache.hc.core5.pool.PoolStats;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/**
 * Handler calls over Apache HttpClient 5 (classic: blocking, on the calling thread), set up so that
 * a call connects only to the addresses {@link HandlerUrlPolicy} accepted for it: the client's
 * {@link DnsResolver} answers with those addresses and looks nothing up (a name cannot be rebound
 * between the check and the connection), and a kept-alive connection is reused only by a call whose
 * check accepted the same addresses (they are its pool state). https certificates are checked
 * against the host name (SNI, the JDK's HTTPS identification and HttpClient's verifier); a body is
 * read up to a limit and the connection dropped past it; {@link Call#abandon} closes the connection
 * under whatever the call is blocked in. Redirects are not followed, and nothing is sent again on
 * HttpClient's own: its retries, authentication and redirects are off. The one re-send is
 * {@link #post}'s, by the handler contract (docs/handler-contract.md).
 */
final class HandlerTransport implements AutoCloseable {

    /** Connecting (the TLS handshake included) waits at most this long, whatever time the call has left. */
    static final Timeout CONNECT_TIMEOUT = Timeout.ofSeconds(5);
    /**
     * An idle connection older than this is closed, not reused: below the idle timeouts of the NAT
     * gateways and load balancers in front of handlers (350 s, 60 s), which drop a connection
     * without telling either end, and past a Lambda freeze between invocations.
     */
    static final Duration IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Open at once, per handler host and in all: well inside Lambda's 1,024 file descriptors, which Postgres, Redis and SQS share. */
    static final int CONNECTION_LIMIT = 256;
    /** A connection idle this long is checked for the handler's close before it is reused (a read of up to 1 ms). */
    private static final TimeValue CHECK_AFTER_IDLE = TimeValue.ofSeconds(2);
    /** A request body larger than this waits for the handler's {@code 100 Continue} (at most 3 s) before it is sent. */
    static final int EXPECT_CONTINUE_ABOVE = 64 * 1024;

    /** The addresses the current call's check accepted: the only answer the resolver gives, on the call's own thread. */
    private static final ThreadLocal<List<InetAddress>> SCREENED = new ThreadLocal<>();

    /** Where a call goes: the handler URL (percent-encoded) and the addresses screened for it. */
    record Target(URI url, List<InetAddress> addresses) {
        Target {
            addresses = List.copyOf(addresses);
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("a handler target needs at least one screened address");
            }
        }

        /** The pool state of its connections: the screened addresses, in any order. */
        Set<InetAddress> poolState() {
            return Set.copyOf(addresses);
        }
    }

    /** A second send's lease state: no pooled connection has it, so the send gets a new one. */
    private record NewConnection(Set<InetAddress> poolState) {}

    private final PoolingHttpClientConnectionManager connections;
    private final CloseableHttpClient http;

    HandlerTransport(SSLContext tls) {
        this(tls, IDLE_TIMEOUT);
    }

    HandlerTransport(SSLContext tls, Duration idleTimeout) {
        Timeout idle = Timeout.of(idleTimeout);
        this.connections = PoolingHttpClientConnectionManagerBuilder.create()
                .setDnsResolver(new ScreenedAddresses())
                .setTlsSocketStrategy(new DefaultClientTlsStrategy(tls, HostnameVerificationPolicy.BOTH, new DefaultHostnameVerifier()))
                .setConnectionFactory(ManagedHttpClientConnectionFactory.builder()
                        // Strict: an answer that does not start with a status line fails at once (the lenient
                        // parser would skip it as garbage and wait for one until the deadline).
                        .responseParserFactory(new DefaultHttpResponseParserFactory(Http1Config.DEFAULT, BasicLineParser.INSTANCE, null))
                        .build())
                .setMaxConnTotal(CONNECTION_LIMIT)
                .setMaxConnPerRoute(CONNECTION_LIMIT)
                .setConnPoolPolicy(PoolReusePolicy.LIFO)
                .setDefaultSocketConfig(SocketConfig.custom().setTcpNoDelay(true).build())
                .setDefaultConnectionConfig(ConnectionConfig.custom()
                        .setConnectTimeout(CONNECT_TIMEOUT)
                        .setIdleTimeout(idle)
                        .setValidateAfterInactivity(CHECK_AFTER_IDLE)
                        .build())
                .setDefaultTlsConfig(TlsConfig.custom().setHandshakeTimeout(CONNECT_TIMEOUT).build())
                .build();
        this.http = HttpClients.custom()
                .setConnectionManager(connections)
                .disableAutomaticRetries()
                .disableRedirectHandling()
                .disableCookieManagement()
                .disableContentCompression()
                .disableAuthCaching()
                // Answers a 401 or 407 as it is: no challenge is taken up, so nothing is sent again with credentials.
                .setTargetAuthenticationStrategy((type, challenges, context) -> List.of())
                .setProxyAuthenticationStrategy((type, challenges, context) -> List.of())
                // After a 408 the handler stopped reading the request: what it left of it may still be on the connection.
                .setConnectionReuseStrategy((request, response, context) -> response.getCode() != 408
                        && DefaultConnectionReuseStrategy.INSTANCE.keepAlive(request, response, context))
                .setKeepAliveStrategy((response, context) -> {
                    TimeValue asked = DefaultConnectionKeepAliveStrategy.INSTANCE.getKeepAliveDuration(response, context);
                    return TimeValue.isPositive(asked) && asked.compareTo(idle) < 0 ? asked : idle;
                })
                // A second send's connection joins the pool as the call's addresses' own.
                .addResponseInterceptorLast((response, entity, context) -> {
                    HttpClientContext call = HttpClientContext.cast(context);
                    if (call.getUserToken() instanceof NewConnection fresh) {
                        call.setUserToken(fresh.poolState());
                    }
                })
                .setRequestExecutor(new HttpRequestExecutor() {
                    @Override
                    public ClassicHttpResponse execute(ClassicHttpRequest request, HttpClientConnection connection,
                                                       HttpResponseInformationCallback informationCallback, HttpContext context)
                            throws IOException, HttpException {
                        Before.record(connection, context);
                        return super.execute(request, connection, informationCallback, context);
                    }
                })
                .setUserAgent("runner")
                .evictIdleConnections(idle)
                .build();
    }

    /**
     * One POST, answered. A {@code replayable} call (one that carries an Idempotency-Key: item calls)
     * that went out on a kept-alive connection which then ended before any byte of an answer, or that
     * was answered {@code 408} there, is sent once more on a new connection, as Go's client does for
     * such requests: mostly a connection the handler (or a server in front of it) closed while idle as
     * the call crossed it. {@code headers} is asked again for the second send, which is signed anew (a
     * handler that remembers the message ids it took must not take it for a replay). A call on a new
     * connection, or one whose answer had begun otherwise, is never sent twice.
     *
     * @param bodyLimit what may be read of a body, by status; past it the connection is dropped
     * @param timeLeft  bounds each wait for the answer's bytes; the call's deadline itself is {@link Call#abandon}
     */
    HandlerAnswers.Reply post(Target target, Supplier<Map<String, String>> headers, byte[] body, boolean replayable,
                              IntUnaryOperator bodyLimit, Duration timeLeft, Call call) throws IOException {
        HttpClientContext context = HttpClientContext.create();
        context.setUserToken(target.poolState());
        try {
            HandlerAnswers.Reply reply = send(target, headers.get(), body, bodyLimit, timeLeft, call, context);
            if (!replayable || reply.status() != 408 || !Before.of(context).reused()) {
                return reply;
            }
        } catch (InterruptedIOException stalledOrAbandoned) {
            throw stalledOrAbandoned;
        } catch (IOException e) {
            if (!replayable || call.abandoned() || !Before.of(context).reused() || Before.of(context).answerBegan(context)) {
                throw e;
            }
        }
        HttpClientContext again = HttpClientContext.create();
        again.setUserToken(new NewConnection(target.poolState()));
        return send(target, headers.get(), body, bodyLimit, timeLeft, call, again);
    }

    /**
     * What the call's connection had carried when the call began to be written on it.
     *
     * @param answers       answers it had carried (0: a new connection)
     * @param receivedBytes bytes it had received
     */
    private record Before(long answers, long receivedBytes) {
        private static final String ATTRIBUTE = Before.class.getName();
        private static final Before NOT_WRITTEN = new Before(0, 0);

        static void record(HttpClientConnection connection, HttpContext context) {
            EndpointDetails details = connection.getEndpointDetails();
            if (details != null) {
                context.setAttribute(ATTRIBUTE, new Before(details.getResponseCount(), details.getReceivedBytesCount()));
            }
        }

        static Before of(HttpClientContext context) {
            return context.getAttribute(ATTRIBUTE) instanceof Before before ? before : NOT_WRITTEN;
        }

        boolean reused() {
            return answers > 0;
        }

        boolean answerBegan(HttpClientContext context) {
            EndpointDetails details = context.getEndpointDetails();
            return details == null || details.getReceivedBytesCount() > receivedBytes;
        }
    }

    private HandlerAnswers.Reply send(Target target, Map<String, String> headers, byte[] body, IntUnaryOperator bodyLimit,
                                      Duration timeLeft, Call call, HttpClientContext context) throws IOException {
        HttpPost post = new HttpPost(target.url());
        headers.forEach(post::addHeader);
        post.setEntity(new ByteArrayEntity(body, null));
        // A large request asks first (Expect: 100-continue): a handler that refuses it (413, 401) says so before it is sent.
        post.setConfig(RequestConfig.custom().setResponseTimeout(Timeout.of(timeLeft))
                .setExpectContinueEnabled(body.length > EXPECT_CONTINUE_ABOVE).build());
        call.attach(post);
        SCREENED.set(target.addresses());
        try {
            CloseableHttpResponse response = (CloseableHttpResponse) http.executeOpen(null, post, context);
            HandlerAnswers.Reply reply = null;
            try {
                reply = read(response, bodyLimit);
                return reply;
            } finally {
                if (reply != null && !reply.bodyOverLimit()) {
                    response.close();
                } else {
                    // Not drained: what is left of an answer over its limit, or after a failure, stays unread.
                    response.close(CloseMode.IMMEDIATE);
                }
            }
        } finally {
            SCREENED.remove();
            call.detach(post);
        }
    }

    /** The answer, its body read up to the limit its status allows (and one byte more, to tell whether there is more). */
    private static HandlerAnswers.Reply read(ClassicHttpResponse response, IntUnaryOperator bodyLimit) throws IOException {
        int status = response.getCode();
        Header retryAfter = response.getFirstHeader("Retry-After");
        HttpEntity entity = response.getEntity();
        byte[] bytes = new byte[0];
        boolean overLimit = false;
        if (entity != null) {
            InputStream in = entity.getContent();
            bytes = in.readNBytes(Math.max(0, bodyLimit.applyAsInt(status)));
            overLimit = in.read() >= 0;
        }
        return new HandlerAnswers.Reply(status, retryAfter == null ? null : retryAfter.getValue(), bytes, overLimit);
    }

    /** Closes every idle connection; calls made later connect again. */
    void closeIdle() {
        connections.closeIdle(TimeValue.ZERO_MILLISECONDS);
    }

    /** Connections open now, idle or in use. */
    int openConnections() {
        PoolStats stats = connections.getTotalStats();
        return stats.getAvailable() + stats.getLeased();
    }

    @Override
    public void close() {
        http.close(CloseMode.GRACEFUL);
    }

    /**
     * One call's hold on the request it is sending, so that its deadline, on another thread, can
     * abandon it: the request is cancelled, which closes its connection under whatever it is
     * blocked in (connect, handshake, write or read), and the connection is not reused.
     */
    static final class Call {
        private boolean abandoned;
        private HttpPost request;

        void attach(HttpPost post) throws InterruptedIOException {
            boolean late;
            synchronized (this) {
                late = abandoned;
                request = late ? null : post;
            }
            if (late) {
                post.cancel();
                throw new InterruptedIOException("handler call abandoned");
            }
        }

        synchronized void detach(HttpPost post) {
            if (request == post) {
                request = null;
            }
        }

        synchronized boolean abandoned() {
            return abandoned;
        }

        void abandon() {
            HttpPost open;
            synchronized (this) {
                abandoned = true;
                open = request;
                request = null;
            }
            if (open != null) {
                open.cancel();
            }
        }
    }

    /**
     * The resolver of every handler connection: the addresses the calling thread's check accepted, and
     * no lookup. A connection made outside {@link #send} (there is none) would find no name.
     */
    private static final class ScreenedAddresses implements DnsResolver {
        @Override
        public InetAddress[] resolve(String host) throws UnknownHostException {
            List<InetAddress> screened = SCREENED.get();
            if (screened == null) {
                throw new UnknownHostException(host + ": a handler connection goes only to the addresses its URL's check accepted");
            }
            return screened.toArray(InetAddress[]::new);
        }

        @Override
        public String resolveCanonicalHostname(String host) {
            return host;
        }
    }

}
