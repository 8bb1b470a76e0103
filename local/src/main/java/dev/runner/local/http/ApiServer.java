package dev.runner.local.http;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.local.lambda.LocalFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;

/**
 * The HTTP API of the template on one local port: each request goes to the function of the
 * most specific matching route, as an API Gateway payload 2.0 event, on a thread of its own
 * (platform threads from the caller's factory, so the invocation's CPU can be measured).
 */
public final class ApiServer implements AutoCloseable {

    /** API Gateway's request payload limit. */
    static final int MAX_BODY_BYTES = 10 * 1024 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);

    /** A route and the function it invokes. */
    public record Route(RouteTemplate template, LocalFunction function) {}

    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private volatile List<Route> routes = List.of();

    private ApiServer(HttpServer server, Clock clock, ThreadFactory threads) {
        this.server = server;
        this.clock = clock;
        this.executor = Executors.newCachedThreadPool(threads);
    }

    /** Takes the port now (0 = any free port), so a taken port fails before anything else starts. */
    public static ApiServer bind(int port, Clock clock, ThreadFactory threads) {
        try {
            var server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 512);
            return new ApiServer(server, clock, threads);
        } catch (BindException e) {
            throw new EmbeddedServers.PortTakenException("api", port);
        } catch (IOException e) {
            throw new IllegalStateException("api port " + port + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public void start(List<Route> routes) {
        var ordered = new ArrayList<>(routes);
        ordered.sort((a, b) -> RouteTemplate.MOST_SPECIFIC_FIRST.compare(a.template(), b.template()));
        this.routes = List.copyOf(ordered);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    @Override
    public void close() {
        server.stop(1);
        executor.close();
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            HttpToApiGateway.Response response = respond(exchange);
            exchange.getResponseHeaders().putAll(response.headers());
            boolean empty = response.body().length == 0;
            exchange.sendResponseHeaders(response.status(), empty ? -1 : response.body().length);
            if (!empty) {
                exchange.getResponseBody().write(response.body());
            }
        } catch (IOException e) {
            LOG.debug("client went away: {}", e.toString());
        }
    }

    private HttpToApiGateway.Response respond(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String rawPath = exchange.getRequestURI().getRawPath();
        byte[] body = readBody(exchange.getRequestBody());
        if (body == null) {
            return HttpToApiGateway.error(413, "payload_too_large", "request body exceeds " + MAX_BODY_BYTES + " bytes");
        }
        for (Route route : routes) {
            Optional<Map<String, String>> parameters = route.template().match(method, rawPath);
            if (parameters.isEmpty()) {
                continue;
            }
            var request = new HttpToApiGateway.Request(method, rawPath, exchange.getRequestURI().getRawQuery(),
                    exchange.getRequestHeaders(), body, exchange.getRemoteAddress().getAddress().getHostAddress(),
                    exchange.getRequestHeaders().getFirst("Host"));
            var event = HttpToApiGateway.event(request, route.template(), parameters.get(), clock.instant());
            return switch (route.function().invoke(event, APIGatewayV2HTTPResponse.class)) {
                case LocalFunction.Outcome.Returned returned -> HttpToApiGateway.response(returned.value());
                case LocalFunction.Outcome.Failed failed -> {
                    LOG.error("{} failed on {} {}: {} {}", route.function().logicalId(), method, rawPath,
                            failed.errorType(), failed.message(), failed.cause());
                    yield HttpToApiGateway.error(500, "internal_error", "Internal Server Error");
                }
            };
        }
        return HttpToApiGateway.error(404, "not_found", "no route for " + method + " " + rawPath);
    }

    /** The whole body, or null when it is over the limit. */
    private static byte[] readBody(InputStream in) throws IOException {
        byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
        return body.length > MAX_BODY_BYTES ? null : body;
    }
}
