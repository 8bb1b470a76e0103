package dev.runner.handler;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.cost.CostTracker;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.integration.HandlerSpec;
import dev.runner.json.Json;
import dev.runner.metrics.Metrics;
import dev.runner.redis.TestClock;
import dev.runner.security.StandardWebhooks;
import dev.runner.testing.FakeHandler;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-handler signing keys from the outside: keys created, rotated and retired through the management API, calls made
 * by Runner's handler client over real HTTP to a handler that verifies as docs/handler-contract.md says, keys read
 * from the real Postgres. The client reads keys with no cache (TTL 0) and runs on the same hand-moved clock as the
 * API, so each step is seen by the next call.
 */
class HandlerSigningIT {

    private static final AtomicInteger SEQUENCE = new AtomicInteger();
    private static final Duration TIME_LEFT = Duration.ofSeconds(10);

    private static TestStack stack;
    private static TestClock clock;
    private static Runner runner;
    private static FakeHandler handlers;
    private static String globalKey;
    private static HandlerClient client;

    @BeforeAll
    static void start() {
        stack = TestStack.create(Map.of());
        clock = TestClock.now();
        runner = new Runner(stack.config(), clock);
        globalKey = stack.environment().get("RUNNER_HANDLER_SIGNING_SECRET");
        handlers = FakeHandler.start(globalKey);
        client = new HandlerClient(new HandlerSigning(new SigningKeyStore(runner.database()), globalKey, Duration.ZERO, clock),
                HandlerUrlPolicy.parse("127.0.0.0/8,::1/128"), clock, CostTracker.NONE, Metrics.NONE);
    }

    @AfterAll
    static void stop() {
        handlers.close();
        runner.close();
        stack.close();
    }

    @Test
    void aHandlerHoldingItsKeyRefusesACallSignedWithAnotherHandlersKey() throws Exception {
        Handler a = handler();
        Handler b = handler();
        String keyA = createKey(a, 0);
        String keyB = createKey(b, 0);
        handlers.handler(a.key()).signingSecrets(keyA).refuseBadSignatures();
        handlers.handler(b.key()).signingSecrets(keyB).refuseBadSignatures();

        assertInstanceOf(Outcome.Succeeded.class, process(a), "Runner's own call to A verifies with A's key");
        assertInstanceOf(Outcome.Succeeded.class, process(b));

        // B's operator holds B's key and signs a call to A as Runner would: A refuses it.
        byte[] body = Json.writeBytes(itemRequest(a));
        HttpRequest.Builder forged = HttpRequest.newBuilder(URI.create(handlers.url(a.key()) + "/process"))
                .header("Content-Type", "application/json").header("Idempotency-Key", UUID.randomUUID().toString())
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        StandardWebhooks.headers(List.of(keyB), "msg_forged", clock.instant().getEpochSecond(), body).forEach(forged::header);
        try (HttpClient http = HttpClient.newHttpClient()) {
            assertEquals(401, http.send(forged.build(), HttpResponse.BodyHandlers.discarding()).statusCode());
        }
        assertFalse(handlers.calls(a.key()).getLast().signatureValid());
        // Neither verifies a call with the deployment-wide key any more: B's operator cannot use that one either.
        handlers.handler(a.key()).signingSecrets(globalKey);
        assertRefused(process(a));
    }

    @Test
    void duringARotationBothKeysVerifyAndAfterTheOldIsRetiredOnlyTheNew() {
        Handler h = handler();
        String first = createKey(h, 0);
        handlers.handler(h.key()).refuseBadSignatures();
        JsonNode rotated = post(h, "{\"overlapSeconds\":3600}");
        assertEquals(201, status(rotated));
        String second = rotated.path("secret").asText();
        assertEquals(List.of("current", "retiring"), states(rotated.path("signingKeys")).subList(0, 2));

        handlers.handler(h.key()).signingSecrets(first);
        assertInstanceOf(Outcome.Succeeded.class, process(h), "the handler still holding the old key takes the call");
        handlers.handler(h.key()).signingSecrets(second);
        assertInstanceOf(Outcome.Succeeded.class, process(h), "the handler holding the new key takes it too");

        String firstId = rotated.path("signingKeys").get(1).path("keyId").asText();
        ApiResponse retired = api(h, "DELETE", "/signing-keys/" + firstId, null, adminKey());
        assertEquals(200, retired.status(), retired.body());
        assertEquals("retired", Json.parse(retired.body()).path("state").asText());

        handlers.handler(h.key()).signingSecrets(first);
        assertRefused(process(h));
        handlers.handler(h.key()).signingSecrets(second);
        assertInstanceOf(Outcome.Succeeded.class, process(h));
    }

    @Test
    void theReplacedKeyStopsSigningWhenTheOverlapEnds() {
        Handler h = handler();
        String first = createKey(h, 0);
        String second = createKey(h, 60);
        handlers.handler(h.key()).signingSecrets(first).refuseBadSignatures();
        assertInstanceOf(Outcome.Succeeded.class, process(h));

        clock.advance(Duration.ofSeconds(61));
        assertRefused(process(h));
        handlers.handler(h.key()).signingSecrets(second);
        assertInstanceOf(Outcome.Succeeded.class, process(h));
    }

    @Test
    void aHandlerWithoutAKeyOfItsOwnIsSignedWithTheGlobalKeyUntilItsFirstKeysOverlapEnds() {
        Handler h = handler();
        handlers.handler(h.key()).signingSecrets(globalKey).refuseBadSignatures();
        assertInstanceOf(Outcome.Succeeded.class, process(h), "no key of its own: the deployment-wide key signs");

        String own = createKey(h, 3600);
        assertInstanceOf(Outcome.Succeeded.class, process(h), "while it moves to its own key, the global key still signs");
        handlers.handler(h.key()).signingSecrets(own);
        assertInstanceOf(Outcome.Succeeded.class, process(h));

        assertEquals(200, api(h, "DELETE", "/signing-keys/global", null, adminKey()).status());
        handlers.handler(h.key()).signingSecrets(globalKey);
        assertRefused(process(h));
        handlers.handler(h.key()).signingSecrets(own);
        assertInstanceOf(Outcome.Succeeded.class, process(h));
    }

    @Test
    void withoutAnyKeyTheCallIsNotMadeAndFailsPermanently() {
        Handler h = handler();
        HandlerClient keyless = new HandlerClient(new HandlerSigning(new SigningKeyStore(runner.database()), null, Duration.ZERO, clock),
                HandlerUrlPolicy.parse("127.0.0.0/8,::1/128"), clock, CostTracker.NONE, Metrics.NONE);
        Outcome outcome = keyless.process(h.integrationKey(), spec(h), itemRequest(h).get("item").deepCopy(), UUID.randomUUID().toString(), TIME_LEFT);
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, outcome);
        assertFalse(failed.retryable());
        assertEquals("handler " + h.integrationKey() + "/" + h.key() + " has no signing key: create one with POST /handlers/"
                + h.integrationKey() + "/" + h.key() + "/signing-keys", failed.error());
        assertTrue(handlers.calls(h.key()).isEmpty(), "nothing unsigned was sent");
    }

    @Test
    void aKeyIsShownOnceAndNeverInAnyGetAnswer() {
        Handler h = handler();
        JsonNode created = post(h, "{\"overlapSeconds\":0}");
        String secret = created.path("secret").asText();
        assertTrue(secret.startsWith("whsec_") && java.util.Base64.getDecoder().decode(secret.substring(6)).length == 32, "256 random bits");
        assertEquals("current", created.path("state").asText());

        for (String path : List.of("/handlers/" + h.integrationKey() + "/" + h.key() + "/signing-keys", "/types/" + h.integrationKey(),
                "/handlers")) {
            ApiResponse answer = call("GET", path, null, adminKey());
            assertEquals(200, answer.status(), path + " " + answer.body());
            assertFalse(answer.body().contains(secret), path + " shows the key");
            assertFalse(answer.body().contains(secret.substring(6)), path + " shows the key's base64");
        }
        JsonNode listed = Json.parse(api(h, "GET", "/signing-keys", null, adminKey()).body()).path("signingKeys");
        assertEquals(List.of("current", "retired"), states(listed), "the key and the global key it replaced at once");
        listed.forEach(key -> assertFalse(key.has("secret")));
    }

    @Test
    void aTenantKeyCanNeitherSeeNorRotateNorRetireAHandlersKeys() {
        Handler h = handler();
        JsonNode created = post(h, "{\"overlapSeconds\":3600}");
        ApiResponse tenantKey = call("POST", "/keys", "{\"tenantId\":\"tenant-" + h.integrationKey() + "\",\"name\":\"ops\"}", adminKey());
        assertEquals(201, tenantKey.status(), tenantKey.body());
        String key = Json.parse(tenantKey.body()).path("key").asText();

        assertEquals(403, api(h, "GET", "/signing-keys", null, key).status());
        assertEquals(403, api(h, "POST", "/signing-keys", "{}", key).status());
        assertEquals(403, api(h, "DELETE", "/signing-keys/global", null, key).status());
        assertEquals(403, api(h, "DELETE", "/signing-keys/" + created.path("keyId").asText(), null, key).status());
        JsonNode keys = Json.parse(api(h, "GET", "/signing-keys", null, adminKey()).body()).path("signingKeys");
        assertEquals(List.of("current", "retiring"), states(keys), "nothing changed");
    }

    @Test
    void rotationsAndRetirementsThatWouldBreakTheRulesAreRefusedWithTheReason() {
        Handler h = handler();
        JsonNode first = post(h, "{\"overlapSeconds\":3600}");
        ApiResponse third = api(h, "POST", "/signing-keys", "{}", adminKey());
        assertEquals(409, third.status(), "the new key and the global key sign already");
        assertTrue(third.body().contains("retire the older one"), third.body());

        ApiResponse current = api(h, "DELETE", "/signing-keys/" + first.path("keyId").asText(), null, adminKey());
        assertEquals(409, current.status());
        assertTrue(current.body().contains("is the current key; rotate it instead"), current.body());

        assertEquals(400, api(h, "POST", "/signing-keys", "{\"overlapSeconds\":-1}", adminKey()).status());
        assertEquals(400, api(h, "POST", "/signing-keys", "{\"overlapSeconds\":2592001}", adminKey()).status());
        assertEquals(404, api(h, "DELETE", "/signing-keys/" + UUID.randomUUID(), null, adminKey()).status());
        assertEquals(404, api(h, "DELETE", "/signing-keys/not-a-key", null, adminKey()).status());
        assertEquals(404, call("POST", "/handlers/" + h.integrationKey() + "/nope/signing-keys", "{}", adminKey()).status());
        assertEquals(404, call("GET", "/handlers/no-such-type/" + h.key() + "/signing-keys", null, adminKey()).status());
    }

    // --- helpers

    /** A type of its own with one handler at the fake handler service. */
    private record Handler(String integrationKey, String key) {}

    private static Handler handler() {
        int n = SEQUENCE.incrementAndGet();
        Handler h = new Handler("sig-" + stack.name() + "-" + n, "h-" + stack.name() + "-" + n);
        ObjectNode type = Json.object().put("name", "signing " + n);
        type.putObject("handlers").putObject(h.key()).put("url", handlers.url(h.key())).put("direction", "inbound");
        ApiResponse saved = call("PUT", "/types/" + h.integrationKey(), Json.write(type), adminKey());
        assertEquals(200, saved.status(), saved.body());
        return h;
    }

    private static String createKey(Handler h, int overlapSeconds) {
        JsonNode created = post(h, "{\"overlapSeconds\":" + overlapSeconds + "}");
        assertEquals(201, status(created), created.toString());
        return created.path("secret").asText();
    }

    /** POST …/signing-keys; the answer's body with its status under "_status". */
    private static JsonNode post(Handler h, String body) {
        ApiResponse response = api(h, "POST", "/signing-keys", body, adminKey());
        ObjectNode node = (ObjectNode) Json.parse(response.body());
        return node.put("_status", response.status());
    }

    private static int status(JsonNode answer) {
        return answer.path("_status").asInt();
    }

    private static List<String> states(JsonNode keys) {
        List<String> states = new java.util.ArrayList<>();
        keys.forEach(key -> states.add(key.path("state").asText()));
        return states;
    }

    private static Outcome process(Handler h) {
        return client.process(h.integrationKey(), spec(h), itemRequest(h).get("item").deepCopy(), UUID.randomUUID().toString(), TIME_LEFT);
    }

    /** A 401 from a handler that refused the signature: a permanent failure. */
    private static void assertRefused(Outcome outcome) {
        Outcome.Failed failed = assertInstanceOf(Outcome.Failed.class, outcome);
        assertFalse(failed.retryable());
        assertTrue(failed.error().contains("401"), failed.error());
    }

    private static HandlerSpec spec(Handler h) {
        return runner.integrations().handlerOrRefresh(h.integrationKey(), h.key()).orElseThrow();
    }

    private static ObjectNode itemRequest(Handler h) {
        ObjectNode request = Json.object();
        request.putObject("item").put("itemId", UUID.randomUUID().toString()).put("tenantId", "t").put("integrationKey", h.integrationKey())
                .put("handlerKey", h.key()).put("externalId", "e-1");
        return request;
    }

    private static String adminKey() {
        return stack.environment().get("RUNNER_API_KEY");
    }

    private static ApiResponse api(Handler h, String method, String suffix, String body, String key) {
        return call(method, "/handlers/" + h.integrationKey() + "/" + h.key() + suffix, body, key);
    }

    private static ApiResponse call(String method, String path, String body, String key) {
        return runner.api().handle(new ApiRequest(method, path, Map.of(), Map.of("authorization", "Bearer " + key), Map.of(),
                body == null ? null : body.getBytes(StandardCharsets.UTF_8)));
    }
}
