package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPResponse;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whatever reaches the management API (any method, path, path parameter, query, header and body, with the right key
 * or not), ApiFunction answers below 500 with a JSON body and never throws. Real Postgres, Redis and SQS behind.
 */
class ManagementApiFuzzIT {

    private static final AtomicLong TRIED = new AtomicLong();
    /** The routes as "METHOD /path", with {} where a generated value goes. */
    private static final List<String> ROUTES = List.of("GET /health", "PUT /types/{}", "GET /types/{}", "PUT /tenants/{}/integrations/{}",
            "GET /tenants/{}/integrations/{}", "POST /runs", "GET /runs/{}", "GET /runs/{}/items", "POST /runs/{}/redrive",
            "POST /handlers/{}/{}/pause", "POST /handlers/{}/{}/resume", "GET /breakers/{}", "GET /console", "GET /console/{}",
            "PUT /ingest-producers/{}", "GET /ingest-producers/{}", "DELETE /ingest-producers/{}", "GET /{}", "POST /{}/{}/{}/{}");

    private static PipelineFixture fixture;
    private static PipelineFixture.Integration integration;
    private static String runId;

    @BeforeContainer
    static void start() {
        fixture = new PipelineFixture(Map.of());
        integration = fixture.integration(true);
        runId = Json.parse(fixture.webhook(fixture.webhookEvent(integration, "{\"externalId\":\"fuzz-run\"}")).getBody()).path("runId").asText();
    }

    @AfterContainer
    static void stop() {
        System.out.println("ManagementApiFuzzIT: " + TRIED.get() + " management requests tried");
        fixture.close();
    }

    record Request(String method, String path, Map<String, String> query, Map<String, String> headers, FuzzInputs.EventBody body) {}

    @Property(tries = 400)
    void anyRequestIsAnsweredBelow500WithJson(@ForAll("requests") Request request) {
        TRIED.incrementAndGet();
        APIGatewayV2HTTPEvent event = new APIGatewayV2HTTPEvent();
        var context = new APIGatewayV2HTTPEvent.RequestContext();
        var http = new APIGatewayV2HTTPEvent.RequestContext.Http();
        http.setMethod(request.method());
        http.setPath(request.path());
        context.setHttp(http);
        event.setRequestContext(context);
        event.setRawPath(request.path());
        event.setQueryStringParameters(request.query());
        event.setHeaders(request.headers());
        event.setBody(request.body().body());
        event.setIsBase64Encoded(request.body().base64());

        APIGatewayV2HTTPResponse response = Lambda.http(new ApiFunction(fixture.runner), event, TestContext.of("api", 30_000));

        Statistics.collect(response.getStatusCode());
        assertTrue(response.getStatusCode() >= 200 && response.getStatusCode() < 500,
                () -> request.method() + " " + request.path() + " -> " + response.getStatusCode() + " " + response.getBody());
        if (!request.path().startsWith("/console")) {
            Json.parse(response.getBody());
        }
    }

    @Provide
    Arbitrary<Request> requests() {
        Arbitrary<String> route = Arbitraries.frequencyOf(FuzzInputs.weighted(9, Arbitraries.of(ROUTES)),
                FuzzInputs.weighted(1, Combinators.combine(Arbitraries.oneOf(Arbitraries.of("PATCH", "HEAD", "DELETE", "get"), FuzzInputs.text()),
                        Arbitraries.of(ROUTES)).as((method, r) -> method + " " + r.substring(r.indexOf(' ') + 1))));
        Arbitrary<List<String>> parameters = parameter().list().ofSize(4);
        Arbitrary<String> junkPath = Arbitraries.oneOf(FuzzInputs.text().map(text -> "/" + text),
                Arbitraries.of("/runs/%zz", "/types/%", "//runs", "/runs/", "/tenants//integrations/x", "/types/a%00b"));
        Arbitrary<Map<String, String>> query = Arbitraries.maps(Arbitraries.oneOf(Arbitraries.of("status", "limit", "after"), FuzzInputs.text()),
                Arbitraries.oneOf(Arbitraries.of("dead", "queued", "0", "1", "500", "501", "-1", UUID.randomUUID().toString()), FuzzInputs.text()))
                .ofMaxSize(3);
        Arbitrary<Map<String, String>> headers = Arbitraries.frequencyOf(
                FuzzInputs.weighted(8, Arbitraries.just(Map.of("authorization", "Bearer " + fixture.apiKey, "content-type", "application/json"))),
                FuzzInputs.weighted(2, FuzzInputs.headers(List.of("authorization", "Authorization", "content-type"))));
        Arbitrary<FuzzInputs.EventBody> body = Arbitraries.frequencyOf(FuzzInputs.weighted(4, FuzzInputs.eventBody()),
                FuzzInputs.weighted(6, Arbitraries.oneOf(typeLike(), tenantLike(), runLike(), producerLike())
                        .map(node -> new FuzzInputs.EventBody(Json.write(node), false))));
        return Combinators.combine(route, parameters, junkPath, Arbitraries.integers().between(0, 9), query, headers, body)
                .as((r, values, junk, dice, q, h, b) -> {
                    String method = r.substring(0, r.indexOf(' '));
                    String template = r.substring(r.indexOf(' ') + 1);
                    String path = dice == 0 ? junk : fill(template, dice < 6 ? existing(template) : values);
                    return new Request(method, path, q, h, b);
                });
    }

    /** PUT /types bodies: right or wrong in any field; handler URLs only where nothing listens or at the fake handler. */
    private static Arbitrary<JsonNode> typeLike() {
        Arbitrary<JsonNode> url = Arbitraries.oneOf(Arbitraries.of(fixture.handlers.url(integration.handlerKey()), "http://127.0.0.1:1/h",
                "not a url", "ftp://x/y", "", "https://").map(u -> (JsonNode) Json.object().textNode(u)), FuzzInputs.json());
        Arbitrary<JsonNode> handler = Combinators.combine(url, Arbitraries.of("inbound", "outbound", "sideways"), FuzzInputs.json(),
                Arbitraries.integers().between(-5, 1_000_000)).as((u, direction, batch, n) -> {
                    ObjectNode node = Json.object().put("direction", direction);
                    node.set("url", u);
                    node.set("batch", batch.isBoolean() ? batch : Json.object().booleanNode(n % 2 == 0));
                    node.set("configs", Json.object().put("concurrency", n % 7 - 1).put("rate_limit_per_minute", n)
                            .put("batch_size", n % 120).put("timeout_ms", n));
                    return (JsonNode) node;
                });
        return Combinators.combine(FuzzInputs.text(), Arbitraries.oneOf(Arbitraries.of("standard", "github", "stripe", "shopify"), FuzzInputs.text()),
                Arbitraries.maps(Arbitraries.oneOf(Arbitraries.just(integration.handlerKey()), FuzzInputs.text()), handler).ofMaxSize(3))
                .as((name, scheme, handlers) -> {
                    ObjectNode node = Json.object().put("name", name).put("webhookScheme", scheme);
                    handlers.forEach(node.putObject("handlers")::set);
                    return node;
                });
    }

    /** PUT /tenants/…/integrations/… bodies. */
    private static Arbitrary<JsonNode> tenantLike() {
        return Combinators.combine(FuzzInputs.json(), FuzzInputs.text(), FuzzInputs.text().list().ofMaxSize(4), FuzzInputs.json(),
                        Arbitraries.oneOf(Arbitraries.of("rate(5 minutes)", "rate(1 minute)", "cron(0 12 * * ? *)", "rate(0 minutes)"), FuzzInputs.text()))
                .as((enabled, secret, secrets, settings, schedule) -> {
                    ObjectNode node = Json.object();
                    node.set("enabled", enabled.isBoolean() ? enabled : Json.object().booleanNode(true));
                    if (secret.length() % 2 == 0) {
                        node.put("webhookSecret", secret);
                    } else {
                        secrets.forEach(node.putArray("webhookSecrets")::add);
                    }
                    node.set("settings", settings.isObject() ? settings : Json.object().set("value", settings));
                    node.putObject("schedules").put(integration.handlerKey(), schedule);
                    return node;
                });
    }

    /** POST /runs bodies. */
    private static Arbitrary<JsonNode> runLike() {
        return Combinators.combine(Arbitraries.oneOf(Arbitraries.just(integration.tenantId()), FuzzInputs.text()),
                Arbitraries.oneOf(Arbitraries.just(integration.integrationKey()), FuzzInputs.text()),
                Arbitraries.oneOf(Arbitraries.just(integration.handlerKey()), FuzzInputs.text()))
                .as((t, i, h) -> Json.object().put("tenantId", t).put("integrationKey", i).put("handlerKey", h));
    }

    /** PUT /ingest-producers bodies. */
    private static Arbitrary<JsonNode> producerLike() {
        return Arbitraries.oneOf(Arbitraries.just(integration.tenantId()), FuzzInputs.text()).list().ofMaxSize(4)
                .map(tenants -> {
                    ObjectNode node = Json.object();
                    tenants.forEach(node.putArray("tenants")::add);
                    return node;
                });
    }

    /** A path parameter: the fixture's real keys, ids, or anything, percent-encoded as a client would (or not). */
    private static Arbitrary<String> parameter() {
        return Arbitraries.frequencyOf(
                FuzzInputs.weighted(3, Arbitraries.of(integration.tenantId(), integration.integrationKey(), integration.handlerKey(),
                        "AIDAEXAMPLEPRODUCER01", "console.js")),
                FuzzInputs.weighted(2, Arbitraries.create(() -> UUID.randomUUID().toString())),
                FuzzInputs.weighted(3, FuzzInputs.text().map(text -> URLEncoder.encode(text, StandardCharsets.UTF_8))),
                FuzzInputs.weighted(1, FuzzInputs.text().map(text -> text.replace("/", ""))));
    }

    /** Path parameters naming what exists, so that requests get past "not found" to the bodies. */
    private static List<String> existing(String template) {
        if (template.startsWith("/tenants/")) {
            return List.of(integration.tenantId(), integration.integrationKey());
        }
        if (template.startsWith("/handlers/")) {
            return List.of(integration.integrationKey(), integration.handlerKey());
        }
        if (template.startsWith("/runs/")) {
            return List.of(runId);
        }
        if (template.startsWith("/ingest-producers/")) {
            return List.of("AIDAFUZZPRODUCER");
        }
        if (template.startsWith("/console/")) {
            return List.of("console.js");
        }
        return List.of(integration.integrationKey(), integration.handlerKey(), "x", "y");
    }

    private static String fill(String template, List<String> values) {
        StringBuilder path = new StringBuilder();
        int next = 0;
        for (String part : template.split("\\{}", -1)) {
            if (next > 0) {
                path.append(values.get(next - 1));
            }
            path.append(part);
            next++;
        }
        return path.toString();
    }

}
