package dev.runner.local.http;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RouteTemplateTest {

    @Test
    void matchesPathParametersByName() {
        var route = RouteTemplate.of("POST", "/webhooks/{tenantId}/{integrationKey}/{handlerKey}");

        assertEquals(Optional.of(Map.of("tenantId", "t-1", "integrationKey", "crm x", "handlerKey", "leads")),
                route.match("POST", "/webhooks/t-1/crm%20x/leads"));
        assertEquals(Optional.empty(), route.match("GET", "/webhooks/t-1/crm/leads"), "another method");
        assertEquals(Optional.empty(), route.match("POST", "/webhooks/t-1/crm"), "too short");
        assertEquals(Optional.empty(), route.match("POST", "/webhooks/t-1/crm/leads/more"), "too long");
        assertEquals("POST /webhooks/{tenantId}/{integrationKey}/{handlerKey}", route.routeKey());
    }

    @Test
    void aGreedyParameterTakesTheRestOfThePath() {
        var route = RouteTemplate.of("ANY", "/files/{proxy+}");

        assertEquals(Optional.of(Map.of("proxy", "a/b/c.txt")), route.match("DELETE", "/files/a/b/c.txt"));
        assertEquals(Optional.empty(), route.match("GET", "/files"), "a greedy parameter needs one segment");
    }

    @Test
    void theMostSpecificRouteWins() {
        List<RouteTemplate> routes = new ArrayList<>(List.of(
                RouteTemplate.of("ANY", "$default"),
                RouteTemplate.of("ANY", "/runs/{proxy+}"),
                RouteTemplate.of("ANY", "/runs/{runId}"),
                RouteTemplate.of("GET", "/runs/{runId}"),
                RouteTemplate.of("GET", "/runs/health")));
        routes.sort(RouteTemplate.MOST_SPECIFIC_FIRST);

        assertEquals("GET /runs/health", first(routes, "GET", "/runs/health"));
        assertEquals("GET /runs/{runId}", first(routes, "GET", "/runs/r-1"));
        assertEquals("ANY /runs/{runId}", first(routes, "POST", "/runs/r-1"));
        assertEquals("ANY /runs/{proxy+}", first(routes, "POST", "/runs/r-1/redrive"));
        assertEquals("$default", first(routes, "GET", "/elsewhere"));
    }

    @Test
    void aGreedyParameterMustBeLast() {
        assertThrows(IllegalArgumentException.class, () -> RouteTemplate.of("GET", "/a/{rest+}/b"));
    }

    private static String first(List<RouteTemplate> routes, String method, String path) {
        return routes.stream().filter(r -> r.match(method, path).isPresent()).findFirst().orElseThrow().routeKey();
    }
}
