package dev.runner.http;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class RouterTest {

    private final Router router = new Router()
            .on("GET", "/runs/{runId}", request -> ApiResponse.error(200, "run", request.pathParameter("runId")))
            .on("GET", "/runs/{runId}/items", request -> ApiResponse.error(200, "items", request.pathParameter("runId")))
            .on("POST", "/runs", request -> ApiResponse.error(202, "created", "-"));

    @Test
    void matchesByMethodAndSegmentsAndBindsParameters() {
        assertEquals("{\"error\":\"run\",\"message\":\"abc\"}", router.route(get("/runs/abc")).body());
        assertEquals("{\"error\":\"items\",\"message\":\"abc\"}", router.route(get("/runs/abc/items/")).body());
        assertEquals(202, router.route(new ApiRequest("POST", "/runs", null, null, null, null)).status());
    }

    @Test
    void decodesPercentEncodedSegments() {
        assertEquals("{\"error\":\"run\",\"message\":\"a b\"}", router.route(get("/runs/a%20b")).body());
    }

    @Test
    void aKnownPathWithAnotherMethodIs405AndAnUnknownPathIs404() {
        assertEquals(405, router.route(new ApiRequest("DELETE", "/runs", null, null, null, null)).status());
        assertEquals(404, router.route(get("/nothing/here")).status());
        assertEquals(404, router.route(get("/runs//items")).status());
    }

    @Test
    void aSegmentThatIsNotPercentEncodingOrDecodesToNulMatchesNoRoute() {
        assertEquals(404, router.route(get("/runs/%zz")).status());
        assertEquals(404, router.route(get("/runs/%")).status());
        assertEquals(404, router.route(get("/runs/a%00b")).status());
    }

    private static ApiRequest get(String path) {
        return new ApiRequest("GET", path, Map.of(), Map.of(), Map.of(), null);
    }
}
