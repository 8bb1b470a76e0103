package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.ValidationMessage;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.testing.OpenApiAnswers;
import dev.runner.webhook.WebhookService;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The OpenAPI document (GET /openapi.json) is true: it validates as OpenAPI 3.1, it names exactly
 * the routes the API serves with the access the route table gives them, and what the API answers
 * before any store is reached validates against it. No I/O but the document (and python3's
 * openapi-spec-validator, when installed).
 */
class OpenApiDocumentTest {

    private static final String ADMIN_KEY = "admin-key-for-tests";
    private static final String RUN = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    private static final String HTTP_METHODS = "get put post delete patch head options trace";

    private final ManagementApi api = new ManagementApi(ADMIN_KEY, ManagementApi.Backend.none(Clock.systemUTC()));
    private final OpenApiAnswers answers = OpenApiAnswers.load();
    private final JsonNode document = answers.document();

    @Test
    void validatesAgainstTheOpenApi31Schema() throws IOException {
        Set<ValidationMessage> errors = openApi31Schema().validate(document);
        assertTrue(errors.isEmpty(), errors.stream().map(e -> e.getInstanceLocation() + ": " + e.getMessage()).toList().toString());
        assertEquals("3.1.0", document.path("openapi").asText());
    }

    /** The two checks are not vacuous: a broken document and a wrong answer are told apart from good ones. */
    @Test
    void aBrokenDocumentAndAWrongAnswerAreCaught() throws IOException {
        var broken = document.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) broken.path("paths").path("/runs").path("get")).put("responses", "none");
        assertTrue(!openApi31Schema().validate(broken).isEmpty());

        String run = Json.write(Json.object().put("runId", RUN).put("tenantId", "t").put("integrationKey", "i").put("handlerKey", "h")
                .put("direction", "inbound").put("status", "finished").put("trigger", "manual").put("priority", 2)
                .put("createdAt", "2026-01-01T00:00:00Z").putNull("finishedAt"));
        AssertionError wrongStatus = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                () -> answers.check("GET", "/runs/" + RUN, 200, run));
        assertTrue(wrongStatus.getMessage().contains("status"), wrongStatus.getMessage());
        AssertionError undeclared = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                () -> answers.check("GET", "/runs/" + RUN, 418, "{}"));
        assertTrue(undeclared.getMessage().contains("status not declared"), undeclared.getMessage());
    }

    /** openapi-spec-validator also checks what a schema cannot (references resolve, path parameters declared); skipped without it. */
    @Test
    void openApiSpecValidatorFindsNothingWrong() throws Exception {
        Path copy = Files.createTempFile("openapi", ".json");
        try {
            Files.write(copy, OpenApiDocument.read(getClass().getClassLoader()));
            Process process;
            try {
                process = new ProcessBuilder("python3", "-m", "openapi_spec_validator", copy.toString()).redirectErrorStream(true).start();
            } catch (IOException e) {
                Assumptions.abort("python3 is not installed: " + e.getMessage());
                return;
            }
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(120, TimeUnit.SECONDS), "openapi-spec-validator did not finish");
            Assumptions.assumeFalse(out.contains("No module named openapi_spec_validator"), "openapi-spec-validator is not installed");
            assertEquals(0, process.exitValue(), out);
            assertTrue(out.strip().endsWith("OK"), out);
        } finally {
            Files.deleteIfExists(copy);
        }
    }

    /** Every route of the table, the webhook route and the callback route, with its access and capability, and nothing else. */
    @Test
    void namesExactlyTheRoutesServedWithTheirAccess() {
        Map<String, String> served = new TreeMap<>();
        for (String route : api.routeTable()) {
            String[] parts = route.split(" ");
            served.put(parts[0] + " " + parts[1], parts[2]);
        }
        served.put("POST " + WebhookService.ROUTE, "public");
        served.put("POST " + dev.runner.callback.CallbackUrls.ROUTE, "public");
        Map<String, String> documented = new TreeMap<>();
        Set<String> capabilities = new TreeSet<>();
        document.path("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            if (HTTP_METHODS.contains(operation.getKey())) {
                JsonNode op = operation.getValue();
                documented.put(operation.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey(), op.path("x-runner-access").asText());
                if (op.has("x-runner-capability")) {
                    capabilities.add(op.path("x-runner-capability").asText());
                }
                boolean open = op.path("security").isArray() && op.path("security").isEmpty();
                assertEquals(op.path("x-runner-access").asText().equals("public"), open,
                        path.getKey() + ": a public route overrides the document's security with none, and only a public one");
            }
        }));
        assertEquals(served, documented);
        var session = Json.parse(api.handle(request("GET", "/session", Map.of(), null, ADMIN_KEY)).body());
        Set<String> granted = new TreeSet<>();
        session.path("can").forEach(capability -> granted.add(capability.asText()));
        assertEquals(granted, capabilities, "every capability the admin is granted, and no other");
    }

    /** Both of docs/management-api.md's ways in: a bearer key, and SigV4 checked by API Gateway. */
    @Test
    void declaresTheApiKeyAndAwsIamSchemes() {
        JsonNode schemes = document.path("components").path("securitySchemes");
        assertEquals("bearer", schemes.path("apiKey").path("scheme").asText());
        assertEquals("awsSigv4", schemes.path("awsIam").path("x-amazon-apigateway-authtype").asText());
        assertEquals(2, document.path("security").size());
    }

    @Test
    void isServedPublicAsTheDocumentItself() {
        ApiResponse response = api.handle(request("GET", "/openapi.json", Map.of(), null, null));
        assertEquals(200, response.status());
        assertEquals("application/json", response.headers().get("content-type"));
        assertEquals(Json.parse(OpenApiDocument.read(getClass().getClassLoader())), Json.parse(response.body()));
    }

    /** Every route without a key: 401 as documented (or, for the public ones, an answer the document has). */
    @Test
    void everyRouteAnswersAKeylessCallAsDocumented() {
        for (String route : api.routeTable()) {
            String[] parts = route.split(" ");
            if (parts[2].equals("public")) {
                continue;
            }
            String path = parts[1].replaceAll("\\{[^}]+}", RUN);
            check(parts[0], path, api.handle(request(parts[0], path, Map.of(), "{}", null)));
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "GET|/runs/not-a-uuid|", "GET|/runs|status=done", "GET|/items|", "POST|/runs|{", "POST|/redrive|{}",
            "GET|/metrics/items|minutes=0", "POST|/keys|{\"name\":\"x\"}", "GET|/nowhere|", "DELETE|/runs|", "PUT|/health|",
            "GET|/console/nothing.txt|", "GET|/openapi.json|", "GET|/console|", "GET|/console/|"})
    void answersBeforeAnyStoreValidate(String method, String path, String input) {
        Map<String, String> query = new HashMap<>();
        String body = "{}";
        if (input != null && input.contains("=")) {
            query.put(input.substring(0, input.indexOf('=')), input.substring(input.indexOf('=') + 1));
        } else if (input != null) {
            body = input;
        }
        check(method, path, api.handle(request(method, path, query, body, ADMIN_KEY)));
    }

    /** The OpenAPI Initiative's JSON Schema for 3.1 documents (test resource; its $id names the version). */
    private static com.networknt.schema.JsonSchema openApi31Schema() throws IOException {
        String schemaText;
        try (InputStream in = OpenApiDocumentTest.class.getResourceAsStream("/openapi/oas-3.1-schema.json")) {
            schemaText = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String id = Json.parse(schemaText).path("$id").asText();
        return OpenApiAnswers.schemaFactory(Map.of(id, schemaText)).getSchema(SchemaLocation.of(id));
    }

    private void check(String method, String path, ApiResponse response) {
        boolean json = response.headers().getOrDefault("content-type", "").startsWith("application/json");
        answers.check(method, path, response.status(), json ? response.body() : null);
    }

    private static ApiRequest request(String method, String path, Map<String, String> query, String body, String key) {
        Map<String, String> headers = new HashMap<>();
        if (key != null) {
            headers.put("authorization", "Bearer " + key);
        }
        return new ApiRequest(method, path, Map.of(), headers, query, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }
}
