package dev.runner.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.app.Runner;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.testing.FakeDns;
import dev.runner.testing.TestStack;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code PUT /types} refuses handler URLs that reach inside, naming the handler and why. (IT: the
 * management API of a Runner on the test servers; host names come from {@link FakeDns}.)
 */
class TypeHandlerUrlIT {

    /** Loopback allowed, as every test stack. */
    private static TestStack loopbackStack;
    private static Runner loopbackAllowed;
    /** No network allowed, as in AWS by default. */
    private static TestStack publicStack;
    private static Runner publicOnly;

    @BeforeAll
    static void start() {
        loopbackStack = TestStack.create(Map.of());
        loopbackAllowed = new Runner(loopbackStack.config(), Clock.systemUTC());
        publicStack = TestStack.create(Map.of("RUNNER_HANDLER_ALLOWED_NETWORKS", ""));
        publicOnly = new Runner(publicStack.config(), Clock.systemUTC());
    }

    @AfterAll
    static void stop() {
        loopbackAllowed.close();
        loopbackStack.close();
        publicOnly.close();
        publicStack.close();
    }

    @Test
    void aTypeWhoseHandlerReachesInsideIsRefusedWithTheReason() {
        FakeDns.answer("crm.internal.test", "10.20.0.7");
        FakeDns.answer("no-such-host.test");
        Map<String, String> refused = Map.of(
                "http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address (the instance metadata service is there)",
                "https://crm.internal.test/h", "crm.internal.test resolves to 10.20.0.7, a private address",
                "https://[fd00:ec2::254]/h", "[fd00:ec2::254] is a unique-local address",
                "https://no-such-host.test/h", "handler host no-such-host.test does not resolve",
                "ftp://example.test/h", "handlers.contacts.url must be an http(s) URL");
        refused.forEach((url, why) -> {
            ApiResponse response = putType(publicOnly, publicStack, "refused-type", url);
            assertEquals(400, response.status(), url + " " + response.body());
            assertTrue(response.body().contains(why), response.body());
        });
        assertEquals(404, get(publicOnly, publicStack, "/types/refused-type-" + publicStack.name()).status(), "nothing was saved");
        FakeDns.forget("crm.internal.test");
        FakeDns.forget("no-such-host.test");
    }

    @Test
    void aLoopbackHandlerIsSavedOnlyWhereLoopbackIsAllowed() {
        ApiResponse refused = putType(publicOnly, publicStack, "local-type", "http://127.0.0.1:9999/h");
        assertEquals(400, refused.status());
        assertTrue(refused.body().contains("handlers.contacts.url refused: 127.0.0.1 is a loopback address"), refused.body());
        ApiResponse plain = putType(loopbackAllowed, loopbackStack, "plain-type", "http://1.1.1.1/h");
        assertTrue(plain.body().contains("plain http is accepted only inside RUNNER_HANDLER_ALLOWED_NETWORKS"), plain.body());
        assertEquals(200, putType(loopbackAllowed, loopbackStack, "local-type", "http://127.0.0.1:9999/h").status());
    }

    @Test
    void aPublicHttpsHandlerIsSaved() {
        FakeDns.answer("crm.example.test", "93.184.215.14");
        assertEquals(200, putType(publicOnly, publicStack, "public-type", "https://crm.example.test/h").status());
        FakeDns.forget("crm.example.test");
    }

    /** Under a key of this class's stacks: the stacks share one database. */
    private static ApiResponse putType(Runner runner, TestStack stack, String name, String url) {
        String integrationKey = name + "-" + publicStack.name();
        ObjectNode type = Json.object().put("name", "CRM");
        type.putObject("handlers").putObject("contacts").put("url", url).put("direction", "inbound");
        return runner.api().handle(new ApiRequest("PUT", "/types/" + integrationKey, Map.of(), auth(stack), Map.of(), Json.writeBytes(type)));
    }

    private static ApiResponse get(Runner runner, TestStack stack, String path) {
        return runner.api().handle(new ApiRequest("GET", path, Map.of(), auth(stack), Map.of(), null));
    }

    private static Map<String, String> auth(TestStack stack) {
        return Map.of("authorization", "Bearer " + stack.environment().get("RUNNER_API_KEY"));
    }
}
