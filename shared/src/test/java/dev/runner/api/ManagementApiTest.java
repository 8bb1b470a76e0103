package dev.runner.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The API's own checks, before anything is stored or read: an API whose stores are all absent
 * (null) answers every case here, so none of them reaches Postgres, Redis or SQS. No I/O.
 */
class ManagementApiTest {

    private static final String ADMIN_KEY = "admin-key-for-tests";
    private static final String RUN = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

    private final ManagementApi api = new ManagementApi(ADMIN_KEY, ManagementApi.Backend.none(Clock.systemUTC()));
    /** ManagementAuth iam, with an operator user and role as admin and a tenant's role as that tenant. */
    private final ManagementApi iam = new ManagementApi(ADMIN_KEY, false, IamPrincipals.parse(
            "arn:aws:iam::123456789012:user/operator=admin, arn:aws:iam::123456789012:role/ops/operator=admin,"
                    + " arn:aws:iam::123456789012:role/acme-sync=tenant:t-acme"), ManagementApi.Backend.none(Clock.systemUTC()));

    @Test
    void aRouteWithoutAKeyIs401() {
        ApiResponse response = api.handle(request("GET", "/runs", Map.of(), null, null));
        assertError(401, "unauthorized", response);
    }

    @ParameterizedTest
    @CsvSource({"Bearer wrong-key", "Basic YWRtaW46YWRtaW4=", "Bearer", "admin-key-for-tests"})
    void aWrongOrMalformedAuthorizationIs401(String authorization) {
        ApiResponse response = api.handle(new ApiRequest("GET", "/runs", Map.of(), Map.of("authorization", authorization), Map.of(), null));
        assertError(401, "unauthorized", response);
    }

    @Test
    void theAdminKeyIsAcceptedWithAnyCaseOfBearer() {
        ApiResponse response = api.handle(new ApiRequest("GET", "/session", Map.of(), Map.of("authorization", "bearer " + ADMIN_KEY),
                Map.of(), null));
        assertEquals(200, response.status(), response.body());
    }

    @Test
    void anIamPrincipalListedAsAdminIsAdminWithoutAKey() {
        ApiResponse response = iam.handle(signed("GET", "/session", "arn:aws:iam::123456789012:user/operator"));
        JsonNode session = Json.parse(response.body());
        assertEquals(200, response.status(), response.body());
        assertEquals("admin", session.path("scope").asText());
        List<String> can = new java.util.ArrayList<>();
        session.path("can").forEach(c -> can.add(c.asText()));
        assertTrue(can.containsAll(List.of("runs:read", "items:redrive", "handlers:pause", "queues:read", "metrics:read", "keys:manage")), can.toString());
    }

    @Test
    void inIamModeBearerKeysAreRefusedAndOnlyListedPrincipalsCall() {
        assertError(401, "unauthorized", iam.handle(new ApiRequest("GET", "/session", Map.of(),
                Map.of("authorization", "Bearer " + ADMIN_KEY), Map.of(), null)));
        // Any session of a listed role: API Gateway names a caller that assumed it by the session.
        assertEquals(200, iam.handle(signed("GET", "/session", "arn:aws:sts::123456789012:assumed-role/operator/alice")).status());
        for (String unlisted : List.of("arn:aws:iam::123456789012:user/someone-else", "arn:aws:sts::123456789012:assumed-role/intruder/x",
                "arn:aws:sts::210987654321:assumed-role/operator/same-role-name-other-account")) {
            assertError(403, "forbidden", iam.handle(signed("GET", "/session", unlisted)));
            assertError(403, "forbidden", iam.handle(signed("GET", "/runs", unlisted)));
        }
        var nobodyListed = new ManagementApi(ADMIN_KEY, false, IamPrincipals.none(), ManagementApi.Backend.none(Clock.systemUTC()));
        assertError(403, "forbidden", nobodyListed.handle(signed("GET", "/session", "arn:aws:iam::123456789012:user/operator")));
    }

    @Test
    void anIamPrincipalListedAsATenantActsForThatTenantOnly() {
        String acme = "arn:aws:sts::123456789012:assumed-role/acme-sync/job-42";
        JsonNode session = Json.parse(iam.handle(signed("GET", "/session", acme)).body());
        assertEquals("tenant", session.path("scope").asText(), session.toString());
        assertEquals("t-acme", session.path("tenantId").asText());
        assertError(403, "forbidden", iam.handle(signed("GET", "/handlers", acme)));
        assertError(404, "not_found", iam.handle(signed("GET", "/tenants/t-other/integrations/crm", acme)));
    }

    @Test
    void withoutAnAdminKeyNoBearerTokenIsAdmin() {
        var keyless = new ManagementApi(null, ManagementApi.Backend.none(Clock.systemUTC()));
        assertError(401, "unauthorized", keyless.handle(new ApiRequest("GET", "/session", Map.of(), Map.of("authorization", "Bearer "),
                Map.of(), null)));
        assertError(401, "unauthorized", keyless.handle(new ApiRequest("GET", "/session", Map.of(), Map.of("authorization", "Bearer null"),
                Map.of(), null)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{|not valid JSON",
            "[]|body must be a JSON object",
            "{\"tenantId\":\"t-1\",\"integrationKey\":\"crm\"}|handlerKey is missing",
            "{\"tenantId\":\"t 1\",\"integrationKey\":\"crm\",\"handlerKey\":\"h\"}|tenantId must match",
            "{\"tenantId\":7,\"integrationKey\":\"crm\",\"handlerKey\":\"h\"}|tenantId must be a non-empty string"})
    void aBadRunBodyIs400NamingTheProblem(String body, String message) {
        assertBadRequest(message, api.handle(request("POST", "/runs", Map.of(), body, ADMIN_KEY)));
    }

    @Test
    void anEmptyBodyIs400() {
        assertBadRequest("body is empty", api.handle(request("POST", "/runs", Map.of(), null, ADMIN_KEY)));
        assertBadRequest("body is empty", api.handle(request("POST", "/redrive", Map.of(), "", ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "GET|/runs/not-a-uuid|runId must be a UUID",
            "GET|/runs/1-1-1-1-1|runId must be a UUID",
            "GET|/runs/not-a-uuid/items|runId must be a UUID",
            "POST|/runs/123/redrive|runId must be a UUID",
            "GET|/items/zzz|itemId must be a UUID",
            "POST|/items/zzz/redrive|itemId must be a UUID",
            "DELETE|/keys/zzz|keyId must be a UUID"})
    void aPathIdThatIsNotAUuidIs400(String method, String path, String message) {
        assertBadRequest(message, api.handle(request(method, path, Map.of(), null, ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/runs|limit=0|limit must be 1..500: 0",
            "/runs|limit=501|limit must be 1..500: 501",
            "/runs|limit=ten|limit must be a whole number: ten",
            "/items|status=dead&limit=-1|limit must be 1..500: -1",
            "/tenants|limit=100000|limit must be 1..500",
            "/metrics/items|minutes=0|minutes must be 1..1440: 0",
            "/metrics/items|minutes=1441|minutes must be 1..1440: 1441",
            "/runs/" + RUN + "/items|limit=0|limit must be 1..500: 0",
            "/runs/" + RUN + "/items|after=x|after must be a UUID: x"})
    void aQueryValueOutOfRangeIs400(String path, String query, String message) {
        assertBadRequest(message, api.handle(request("GET", path, query(query), null, ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/runs|status=done|status must be one of queued, fetching, running, completed, completed_with_errors, failed, cancelled: done",
            "/runs|trigger=fast|trigger must be one of webhook, manual, queue, schedule: fast",
            "/items|status=lost|status must be one of queued, processing, succeeded, retrying, dead, parked, cancelled, pending, superseded: lost",
            "/items|tenantId=t-1|status is missing",
            "/runs/" + RUN + "/items|status=DEAD|status must be one of",
            "/runs|tenantId=a/b|tenantId must match",
            "/runs|before=not-a-cursor|before is not a cursor this API gave out",
            "/items|status=dead&after=bm90LWEtY3Vyc29y|after is not a cursor this API gave out"})
    void anUnknownChoiceOrForeignCursorIs400(String path, String query, String message) {
        assertBadRequest(message, api.handle(request("GET", path, query(query), null, ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{}|give at least one of tenantId, integrationKey, handlerKey, runId",
            "{\"tenantId\":\"t-1\",\"limit\":0}|limit must be 1..10000: 0",
            "{\"tenantId\":\"t-1\",\"limit\":10001}|limit must be 1..10000: 10001",
            "{\"tenantId\":\"t-1\",\"limit\":\"many\"}|limit must be an integer",
            "{\"runId\":\"nope\"}|runId must be a UUID: nope"})
    void aBulkRedriveNeedsAFilterAndABoundedLimit(String body, String message) {
        assertBadRequest(message, api.handle(request("POST", "/redrive", Map.of(), body, ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"name\":\"ci\"}|tenantId is missing",
            "{\"tenantId\":\"t-1\"}|name is missing",
            "{\"tenantId\":\"t-1\",\"name\":\"   \"}|name must be a non-empty string"})
    void aKeyNeedsATenantAndAName(String body, String message) {
        assertBadRequest(message, api.handle(request("POST", "/keys", Map.of(), body, ADMIN_KEY)));
    }

    @ParameterizedTest
    @CsvSource({"DELETE,/runs", "PUT,/health", "GET,/redrive", "PATCH,/runs/" + RUN, "POST,/handlers", "GET,/keys/" + RUN})
    void aKnownPathWithAnotherMethodIs405(String method, String path) {
        assertError(405, "method_not_allowed", api.handle(request(method, path, Map.of(), null, ADMIN_KEY)));
    }

    @Test
    void anUnknownPathIs404WithOrWithoutAKey() {
        assertError(404, "not_found", api.handle(request("GET", "/nothing/here", Map.of(), null, ADMIN_KEY)));
        assertError(404, "not_found", api.handle(request("GET", "/nothing/here", Map.of(), null, null)));
    }

    @Test
    void everyRouteButHealthTheOpenApiDocumentAndTheConsoleNeedsAKey() {
        for (String route : api.routeTable()) {
            String[] parts = route.split(" ");
            if (parts[1].equals("/health") || parts[1].equals("/openapi.json") || parts[1].startsWith("/console")) {
                assertEquals("public", parts[2], route);
                continue;
            }
            String path = parts[1].replaceAll("\\{[^}]+}", RUN);
            assertError(401, "unauthorized", api.handle(request(parts[0], path, Map.of(), "{}", null)));
        }
    }

    private static ApiRequest request(String method, String path, Map<String, String> query, String body, String key) {
        Map<String, String> headers = new HashMap<>();
        if (key != null) {
            headers.put("authorization", "Bearer " + key);
        }
        return new ApiRequest(method, path, Map.of(), headers, query, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> query(String query) {
        Map<String, String> parameters = new HashMap<>();
        for (String pair : query.split("&")) {
            int equals = pair.indexOf('=');
            parameters.put(pair.substring(0, equals), pair.substring(equals + 1));
        }
        return parameters;
    }

    private static void assertBadRequest(String message, ApiResponse response) {
        assertError(400, "bad_request", response);
        String actual = Json.parse(response.body()).path("message").asText();
        assertTrue(actual.contains(message), "message " + actual + " lacks " + message);
    }

    /** A request whose caller API Gateway verified with SigV4. */
    private static ApiRequest signed(String method, String path, String principal) {
        return new ApiRequest(method, path, Map.of(), Map.of(), Map.of(), null, principal);
    }

    private static void assertError(int status, String error, ApiResponse response) {
        assertEquals(status, response.status(), response.body());
        assertEquals(error, Json.parse(response.body()).path("error").asText(), response.body());
    }
}
