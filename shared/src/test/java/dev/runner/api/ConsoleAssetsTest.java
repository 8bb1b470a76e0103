package dev.runner.api;

import dev.runner.http.ApiRequest;
import dev.runner.http.ApiResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConsoleAssetsTest {

    private final ConsoleAssets assets = new ConsoleAssets();

    @Test
    void servesThePageWithAStrictContentSecurityPolicy() {
        ApiResponse page = assets.page(get("/console", Map.of()));
        assertEquals(200, page.status());
        assertEquals("text/html; charset=utf-8", page.headers().get("content-type"));
        String policy = page.headers().get("content-security-policy");
        assertTrue(policy.startsWith("default-src 'self'"), policy);
        assertTrue(policy.contains("script-src 'self';"), policy);
        assertFalse(policy.contains("unsafe-inline") || policy.contains("unsafe-eval"), policy);
        assertEquals("nosniff", page.headers().get("x-content-type-options"));
        assertTrue(page.body().contains("<title>Runner console</title>"), page.body());
    }

    @Test
    void servesTheScriptAndTheStyleWithTheirContentTypes() {
        ApiResponse script = assets.asset(get("/console/console.js", Map.of("asset", "console.js")));
        ApiResponse style = assets.asset(get("/console/console.css", Map.of("asset", "console.css")));
        assertEquals(200, script.status());
        assertEquals("text/javascript; charset=utf-8", script.headers().get("content-type"));
        assertEquals(200, style.status());
        assertEquals("text/css; charset=utf-8", style.headers().get("content-type"));
        assertEquals("no-cache", style.headers().get("cache-control"));
    }

    @Test
    void answersNotModifiedWhenTheBrowserHasTheSameVersion() {
        String etag = assets.page(get("/console", Map.of())).headers().get("etag");
        ApiResponse again = assets.page(new ApiRequest("GET", "/console", Map.of(), Map.of("if-none-match", etag), Map.of(), null));
        assertEquals(304, again.status());
        assertEquals("", again.body());
        ApiResponse other = assets.page(new ApiRequest("GET", "/console", Map.of(), Map.of("if-none-match", "\"stale\""), Map.of(), null));
        assertEquals(200, other.status());
    }

    @Test
    void redirectsATrailingSlashSoRelativeLinksResolveUnderConsole() {
        ApiResponse redirect = assets.page(get("/console/", Map.of()));
        assertEquals(308, redirect.status());
        assertEquals("/console", redirect.headers().get("location"));
    }

    @Test
    void servesOnlyItsOwnFiles() {
        for (String name : List.of("index.html", "../template.yaml", "secret.txt", "")) {
            assertEquals(404, assets.asset(get("/console/" + name, Map.of("asset", name))).status(), name);
        }
    }

    @Test
    void takesOnlyConsolePathsOutOfTheKeyCheck() {
        assertTrue(ConsoleAssets.serves("/console"));
        assertTrue(ConsoleAssets.serves("/console/"));
        assertTrue(ConsoleAssets.serves("/console/console.js"));
        for (String path : List.of("/consoles", "/runs", "/", "", "/runs/console", "/console-x/y")) {
            assertFalse(ConsoleAssets.serves(path), path);
        }
    }

    /** The policy forbids inline script and style, so the page must hold none: it would silently not run. */
    @Test
    void thePageHasNoInlineScriptStyleOrHandler() {
        String html = assets.page(get("/console", Map.of())).body();
        assertFalse(Pattern.compile("<script(?![^>]*\\bsrc=)[^>]*>", Pattern.CASE_INSENSITIVE).matcher(html).find(), "inline <script>");
        assertFalse(Pattern.compile("<style|\\sstyle=", Pattern.CASE_INSENSITIVE).matcher(html).find(), "inline style");
        assertFalse(Pattern.compile("\\son[a-z]+=", Pattern.CASE_INSENSITIVE).matcher(html).find(), "inline event handler");
    }

    /** Everything the console shows is untrusted text: it builds DOM nodes, never markup from strings. */
    @Test
    void theScriptNeverTurnsStringsIntoMarkupOrCode() {
        String script = assets.asset(get("/console/console.js", Map.of("asset", "console.js"))).body();
        for (String sink : List.of("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                "new Function", "createContextualFragment", "DOMParser", "srcdoc")) {
            assertFalse(script.contains(sink), sink);
        }
    }

    private static ApiRequest get(String path, Map<String, String> pathParameters) {
        return new ApiRequest("GET", path, pathParameters, Map.of(), Map.of(), null);
    }
}
