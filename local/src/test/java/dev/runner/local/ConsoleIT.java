package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;
import dev.runner.local.ContractFixtures.Seen;
import dev.runner.local.demo.DemoIntegration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.Select;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator console in headless Chromium against the local runtime with real data: sign in,
 * find a run and watch it complete, pause and resume a handler, open a dead item whose texts are
 * hostile markup and redrive it. Screenshots of every view go to local/target/console-screenshots/.
 * Skipped (not failed) when Chromium cannot be installed: see {@link HeadlessChromium}.
 */
class ConsoleIT {

    private static final String SECRET = "console-webhook-secret-0123";
    /** Texts a handler or a sender controls; the console must show them as text, never run them. */
    private static final String HOSTILE_ERROR = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">";
    private static final String HOSTILE_ID = "<b onmouseover=\"window.__pwned = 3\">bold</b>";

    private static LocalRuntime runtime;
    private static RunnerApi api;
    private static HeadlessChromium browser;
    private static WebDriver driver;
    private static HostileHandler hostile;

    @BeforeAll
    static void start() {
        browser = HeadlessChromium.start(LocalRuntimeIT.projectTemplate().resolveSibling("local/target/console-screenshots"));
        driver = browser.driver();
        runtime = LocalRuntime.start(LocalOptions.defaults(LocalRuntimeIT.projectTemplate(), Map.of(
                "RUNNER_BACKOFF_BASE_MS", "200",
                "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000")).withFreePorts());
        api = new RunnerApi(runtime.apiUrl(), runtime.apiKey());
        hostile = HostileHandler.start();
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.close();
        }
        if (hostile != null) {
            hostile.close();
        }
        if (runtime != null) {
            runtime.close();
        }
    }

    @BeforeEach
    void signedOut() {
        // Cleared from a page of the same origin that runs no script: on the console itself, a sign-in
        // with the saved key may still be under way and would save it again.
        driver.get(runtime.apiUrl().resolve("/console/console.css").toString());
        script("sessionStorage.clear()");
        driver.get(console());
        visible(By.id("signin-key"));
    }

    @Test
    void servesThePageWithoutAKeyUnderAStrictPolicy() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> page = http.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/console")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, page.statusCode());
        assertTrue(page.headers().firstValue("content-type").orElseThrow().startsWith("text/html"));
        String policy = page.headers().firstValue("content-security-policy").orElseThrow();
        assertTrue(policy.startsWith("default-src 'self'") && !policy.contains("unsafe-inline"), policy);
        HttpResponse<String> script = http.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/console/console.js")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, script.statusCode());
        assertTrue(script.headers().firstValue("content-type").orElseThrow().startsWith("text/javascript"));
        HttpResponse<String> data = http.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/runs/" + UUID.randomUUID())).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(401, data.statusCode(), "the console's open door must not open the API: " + data.body());
    }

    @Test
    void signsInWithTheKeyKeptInTheTabSessionOnly() {
        type(By.id("signin-key"), "rk_wrong_key_0123456789");
        driver.findElement(By.id("signin-submit")).click();
        awaitText(By.id("signin-error"), "The server refused this key.");
        assertFalse(driver.findElement(By.id("app")).isDisplayed());
        browser.screenshot("01-sign-in-refused");

        signIn();
        awaitText(By.id("who"), "admin");
        assertEquals(runtime.apiKey(), script("return sessionStorage.getItem('runner.console.key')"));
        assertEquals(0L, script("return localStorage.length"));
        assertEquals("", script("return document.cookie"));
        assertFalse(driver.getCurrentUrl().contains(runtime.apiKey()), driver.getCurrentUrl());

        driver.findElement(By.id("signout")).click();
        visible(By.id("signin-key"));
        assertNull(script("return sessionStorage.getItem('runner.console.key')"));
    }

    /** A paused handler parks the run's items; resuming it from the console lets the run complete on screen. */
    @Test
    void watchesARunCompleteAfterItsHandlerIsResumed() {
        String integration = "it-console-pause";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant("t-console-pause", integration, SECRET, Json.object().put("pages", 2).put("pageSize", 5));
        signIn();

        openView("Handlers");
        type(By.id("f-integration-key"), integration);
        type(By.id("f-handler-key"), DemoIntegration.HANDLER_KEY);
        click(By.cssSelector("[data-key='form-pause']"));
        awaitText(By.id("status"), integration + "/contacts paused");
        browser.fullPageScreenshot("05-handlers-paused");

        String runId = api.startRun("t-console-pause", integration);
        openView("Runs");
        type(By.id("f-run-id"), runId);
        driver.findElement(By.xpath("//button[normalize-space()='Open run']")).click();
        awaitText(By.id("view-title"), "Run " + runId);
        awaitText(By.id("main"), "0 succeeded · 0 dead · 10 open of 10");
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("counts").path("parked").asInt() == 10);
        awaitText(By.cssSelector("main tbody"), "parked");
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> !driver.findElement(By.cssSelector("main tbody")).getText().contains("queued"));
        browser.fullPageScreenshot("03-run-parked");

        openView("Handlers");
        type(By.id("f-integration-key"), integration);
        type(By.id("f-handler-key"), DemoIntegration.HANDLER_KEY);
        click(By.cssSelector("[data-key='form-resume']"));
        awaitText(By.id("status"), integration + "/contacts resumed; 10 parked items sent back to work.");

        // Find the run again in the runs view (without GET /runs: the runs opened in this session).
        openView("Runs");
        visible(By.cssSelector("a[title='" + runId + "']"));
        awaitText(By.cssSelector("main tbody"), "completed");
        browser.fullPageScreenshot("02-runs");
        click(By.cssSelector("a[title='" + runId + "']"));
        awaitText(By.id("view-title"), "Run " + runId);
        awaitText(By.id("main"), "10 succeeded · 0 dead · 0 open of 10");
        browser.fullPageScreenshot("04-run-completed");
    }

    @Test
    void showsAHostileDeadItemAsTextAndRedrivesIt() {
        String integration = "it-console-hostile";
        api.putType(integration, hostile.url(), 5, 600000);
        api.putTenant("t-console-hostile", integration, SECRET, Json.object());
        hostile.failing.set(true);
        String body = Json.write(Json.object().put("externalId", HOSTILE_ID).put("name", HOSTILE_ERROR));
        String runId = RunnerApi.require(api.webhook("t-console-hostile", integration, SECRET, body), 202).body().path("runId").asText();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> api.run(runId).path("status").asText().equals("completed_with_errors"));

        signIn();
        driver.get(console() + "#/runs/" + runId);
        awaitText(By.id("main"), "0 succeeded · 1 dead · 0 open of 1");
        assertEquals(HOSTILE_ID, textOf(By.cssSelector("main tbody tr td:first-child")));
        assertEquals(HOSTILE_ERROR, textOf(By.cssSelector("main tbody td.error-text")));
        click(By.cssSelector("main tbody summary"));
        awaitText(By.cssSelector("main tbody details"), "Attempt 1");
        assertTrue(textOf(By.cssSelector("main tbody details")).contains(HOSTILE_ERROR));
        await().ignoreExceptions().until(() -> {
            new Actions(driver).moveToElement(driver.findElement(By.cssSelector("main tbody td:first-child"))).perform();
            return true;
        });
        assertNull(script("return window.__pwned ?? null"), "untrusted text ran as code");
        assertTrue(driver.findElements(By.cssSelector("main img, main script, main b")).isEmpty(), "untrusted text became markup");
        browser.fullPageScreenshot("06-dead-item");

        hostile.failing.set(false);
        click(By.cssSelector("[data-key='redrive-run']"));
        awaitText(By.id("status"), "1 dead items sent back to work");
        awaitText(By.id("main"), "1 succeeded · 0 dead · 0 open of 1");
        awaitText(By.cssSelector("main dl"), "completed");
        browser.fullPageScreenshot("07-dead-item-redriven");
    }

    /** Every view reached from the keyboard alone, with a visible focus, and no script or policy error. */
    @Test
    void isUsableWithTheKeyboardAlone() {
        driver.get(console() + "#/runs");
        WebElement key = visible(By.id("signin-key"));
        assertEquals(key, driver.switchTo().activeElement(), "the key field has the focus on arrival");
        key.sendKeys(runtime.apiKey(), Keys.ENTER);
        awaitText(By.id("view-title"), "Runs");
        assertEquals("view-title", driver.switchTo().activeElement().getDomAttribute("id"), "focus moves to the view's heading");

        // Backwards from the heading: the header's controls, the views, then the skip link.
        WebElement skip = tabBackTo("Skip to content");
        assertTrue(!"none".equals(skip.getCssValue("outline-style")), "the skip link has no visible focus");
        new Actions(driver).sendKeys(Keys.ENTER).perform();
        assertEquals("main", driver.switchTo().activeElement().getDomAttribute("id"));

        List<String> views = List.of("Dead items", "Handlers", "Tenants", "Queues", "Charts", "Runs");
        for (int i = 0; i < views.size(); i++) {
            String view = views.get(i);
            WebElement link = tabBackTo(view);
            assertTrue(!"none".equals(link.getCssValue("outline-style")), view + " link has no visible focus");
            new Actions(driver).sendKeys(Keys.ENTER).perform();
            awaitText(By.id("view-title"), view);
            assertEquals("view-title", driver.switchTo().activeElement().getDomAttribute("id"), "focus moves to the view's heading");
            assertEquals("page", link.getDomAttribute("aria-current"));
            browser.fullPageScreenshot(String.format("1%d-view-%s", i, view.toLowerCase().replace(' ', '-')));
        }
        List<String> problems = driver.manage().logs().get("browser").getAll().stream()
                .map(entry -> entry.getMessage())
                .filter(message -> message.contains("Content Security Policy") || message.contains("Uncaught"))
                .toList();
        assertTrue(problems.isEmpty(), problems.toString());
    }

    /**
     * The views of the routes docs/console-api.md adds, fed contract-shaped answers inside the
     * browser (everything else is the runtime): what they show, and the requests their buttons send.
     */
    @Test
    void rendersTheContractsViewsAndSendsTheirRequests() {
        try (ContractFixtures fixtures = ContractFixtures.install(driver, ContractFixtures.adminSession())) {
            signIn();
            awaitText(By.id("who"), "Signed in: admin key");
            assertFalse(textOf(By.id("who")).contains("assumed"));

            // Runs: newest first, progress in words, keyset paging both ways, filters sent and kept in the address.
            awaitText(By.cssSelector("main tbody"), "25 succeeded · 5 dead · 10 open of 40");
            assertEquals(List.of(ContractFixtures.RUN_A, ContractFixtures.RUN_B), runLinks());
            browser.fullPageScreenshot("20-contract-runs");
            click(By.xpath("//button[normalize-space()='Older']"));
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> runLinks().equals(List.of(ContractFixtures.RUN_C)));
            assertTrue(fixtures.seen().stream().anyMatch(r -> "cursor-2".equals(r.query().get("before"))));
            click(By.xpath("//button[normalize-space()='Newer']"));
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                    .until(() -> runLinks().equals(List.of(ContractFixtures.RUN_A, ContractFixtures.RUN_B)));
            type(By.id("f-tenant"), "t-a");
            new Select(driver.findElement(By.id("f-status"))).selectByValue("running");
            click(By.xpath("//button[normalize-space()='Apply']"));
            await().atMost(Duration.ofSeconds(10)).until(() -> fixtures.seen().stream().anyMatch(r -> r.path().equals("/runs")
                    && "t-a".equals(r.query().get("tenantId")) && "running".equals(r.query().get("status"))));
            assertTrue(driver.getCurrentUrl().endsWith("#/runs?tenantId=t-a&status=running"), driver.getCurrentUrl());

            // Dead items: untrusted texts as text; redrive one, then every dead item of a tenant after a confirmation.
            openView("Dead items");
            awaitText(By.cssSelector("main tbody"), ContractFixtures.HOSTILE_ERROR);
            assertTrue(driver.findElements(By.cssSelector("main tbody i, main tbody script")).isEmpty());
            assertNull(script("return window.__pwned ?? null"));
            click(By.cssSelector("button[aria-label='Redrive item " + ContractFixtures.HOSTILE_ID + "']"));
            awaitText(By.id("status"), "Item " + ContractFixtures.HOSTILE_ID + " sent back to work.");
            assertTrue(fixtures.seen().stream().anyMatch(r -> r.method().equals("POST")
                    && r.path().equals("/items/0190aaaa-0000-7000-8000-000000000001/redrive")));
            awaitText(By.id("main"), "Set at least one filter");
            type(By.id("f-tenant"), "t-a");
            click(By.xpath("//button[normalize-space()='Apply']"));
            click(By.cssSelector("[data-key='bulk-ask']"));
            assertEquals("bulk-confirm", driver.switchTo().activeElement().getDomAttribute("data-key"), "focus moves to the confirmation");
            browser.fullPageScreenshot("21-contract-dead-items");
            new Actions(driver).sendKeys(Keys.ENTER).perform();
            awaitText(By.id("status"), "3 dead items of 2 runs sent back to work.");
            Seen bulk = fixtures.seen().stream().filter(r -> r.path().equals("/redrive")).findFirst().orElseThrow();
            assertEquals(Json.parse("{\"tenantId\":\"t-a\"}"), Json.parse(bulk.body()));

            // Handlers: breaker states and closeness to limits in words; resume a paused one.
            openView("Handlers");
            awaitText(By.cssSelector("main tbody"), "4 of 5 calls in flight (80 %) — near limit");
            String handlers = textOf(By.cssSelector("main tbody"));
            for (String expected : List.of("Open until", "Half-open (probing)", "Paused", "600 of 600 calls in the last minute (100 %) — at limit",
                    "1 calls in flight, no limit")) {
                assertTrue(handlers.contains(expected), expected + " in " + handlers);
            }
            browser.fullPageScreenshot("22-contract-handlers");
            click(By.cssSelector("button[aria-label='Resume crm-c/invoices']"));
            awaitText(By.id("status"), "crm-c/invoices resumed; 12 parked items sent back to work.");
            assertTrue(fixtures.seen().stream().anyMatch(r -> r.method().equals("POST") && r.path().equals("/handlers/crm-c/invoices/resume")));

            openView("Tenants");
            awaitText(By.cssSelector("main tbody"), "120 of 1,000 items (12 %)");
            awaitText(By.cssSelector("main tbody"), "2,500 waiting for a slot");
            browser.fullPageScreenshot("23-contract-tenants");

            openView("Queues");
            awaitText(By.cssSelector("main tbody"), "runner-items-schedule");
            assertTrue(textOf(By.cssSelector("main tbody")).contains("schedule (priority 5) 20,000 50 18,000 1 h 30 min"),
                    textOf(By.cssSelector("main tbody")));
            browser.fullPageScreenshot("24-contract-queues");

            openView("Charts");
            awaitText(By.id("main"), "Deferrals per minute by reason");
            int succeeded = ContractFixtures.metricsTotal(fixtures.metricsAnswer(), "succeeded");
            awaitText(By.cssSelector("main ul.legend"), "Succeeded: " + String.format(Locale.US, "%,d", succeeded));
            assertEquals(2, driver.findElements(By.cssSelector("main figure svg.plot[role='img']")).size());
            assertTrue(driver.findElements(By.cssSelector("main figure svg.plot rect.f-succeeded")).size() == 60);
            assertTrue(driver.findElement(By.cssSelector("main figure svg.plot")).getDomAttribute("aria-label")
                    .contains(String.format(Locale.US, "%,d succeeded", succeeded)));
            browser.fullPageScreenshot("25-contract-charts");
        }
    }

    /** A tenant key sees its own tenant only: the shared views are gone and the tenant filter is fixed. */
    @Test
    void aTenantKeySeesOnlyWhatItMayUse() {
        try (ContractFixtures fixtures = ContractFixtures.install(driver, ContractFixtures.tenantSession("t-a"))) {
            signIn();
            awaitText(By.id("who"), "Signed in: tenant t-a");
            List<String> views = driver.findElements(By.cssSelector("nav a")).stream()
                    .filter(WebElement::isDisplayed).map(WebElement::getText).toList();
            assertEquals(List.of("Runs", "Dead items", "Tenants"), views);
            WebElement tenant = visible(By.id("f-tenant"));
            assertEquals("t-a", tenant.getDomProperty("value"));
            assertTrue(tenant.getDomAttribute("readonly") != null, "a tenant key cannot choose another tenant");
            await().atMost(Duration.ofSeconds(10)).until(() -> fixtures.seen().stream()
                    .anyMatch(r -> r.path().equals("/runs") && "t-a".equals(r.query().get("tenantId"))));
            browser.fullPageScreenshot("26-contract-tenant-key");

            driver.get(console() + "#/charts");
            awaitText(By.id("view-title"), "Runs");
            assertTrue(driver.getCurrentUrl().endsWith("#/runs"), driver.getCurrentUrl());
        }
    }

    /** The views that need the routes docs/console-api.md adds, once they exist. */
    @Test
    @Disabled("needs GET /runs, GET /items, POST /items/{itemId}/redrive and GET /handlers of docs/console-api.md")
    void listsRunsNewestFirstAndRedrivesOneDeadItemFromTheDeadItemsView() {
        String integration = "it-console-lists";
        api.putType(integration, hostile.url(), 5, 600000);
        api.putTenant("t-console-lists", integration, SECRET, Json.object());
        hostile.failing.set(true);
        String first = RunnerApi.require(api.webhook("t-console-lists", integration, SECRET, "{\"externalId\":\"first\"}"), 202)
                .body().path("runId").asText();
        String second = RunnerApi.require(api.webhook("t-console-lists", integration, SECRET, "{\"externalId\":\"second\"}"), 202)
                .body().path("runId").asText();
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(second).path("counts").path("dead").asInt() == 1
                && api.run(first).path("counts").path("dead").asInt() == 1);

        signIn();
        type(By.id("f-tenant"), "t-console-lists");
        driver.findElement(By.xpath("//button[normalize-space()='Apply']")).click();
        awaitText(By.cssSelector("main tbody"), second.substring(second.length() - 8));
        List<WebElement> links = driver.findElements(By.cssSelector("main tbody a[title]"));
        assertEquals(List.of(second, first), links.stream().map(a -> a.getDomAttribute("title")).toList(), "newest first");

        openView("Dead items");
        type(By.id("f-tenant"), "t-console-lists");
        driver.findElement(By.xpath("//button[normalize-space()='Apply']")).click();
        awaitText(By.cssSelector("main tbody"), "second");
        hostile.failing.set(false);
        driver.findElement(By.cssSelector("button[aria-label='Redrive item second']")).click();
        awaitText(By.id("status"), "Item second sent back to work.");
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(second).path("status").asText().equals("completed"));

        openView("Handlers");
        WebElement pause = visible(By.cssSelector("button[aria-label='Pause " + integration + "/contacts']"));
        pause.click();
        awaitText(By.id("status"), integration + "/contacts paused");
        visible(By.cssSelector("button[aria-label='Resume " + integration + "/contacts']")).click();
        awaitText(By.id("status"), integration + "/contacts resumed");
    }

    // ------------------------------------------------------------------ helpers

    /** The page with a one-second live refresh, so the tests watch changes within seconds. */
    private static String console() {
        return runtime.apiUrl().resolve("/console?refresh=1").toString();
    }

    private void signIn() {
        type(By.id("signin-key"), runtime.apiKey());
        driver.findElement(By.id("signin-submit")).click();
        visible(By.id("view-title"));
    }

    private static List<String> runLinks() {
        return driver.findElements(By.cssSelector("main tbody a[title]")).stream().map(a -> a.getDomAttribute("title")).toList();
    }

    private void openView(String name) {
        driver.findElement(By.linkText(name)).click();
        awaitText(By.id("view-title"), name);
    }

    /** Shift+Tab until a link with this text has the focus. */
    private static WebElement tabBackTo(String linkText) {
        for (int i = 0; i < 20; i++) {
            new Actions(driver).keyDown(Keys.SHIFT).sendKeys(Keys.TAB).keyUp(Keys.SHIFT).perform();
            WebElement active = driver.switchTo().activeElement();
            if (linkText.equals(active.getText()) && "a".equals(active.getTagName())) {
                return active;
            }
        }
        throw new AssertionError("no link " + linkText + " within 20 Shift+Tabs");
    }

    /** Clicks what the live refresh may be redrawing: found again until the click lands. */
    private static void click(By by) {
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            driver.findElement(by).click();
            return true;
        });
    }

    private static String textOf(By by) {
        return await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> driver.findElement(by).getText(), text -> true);
    }

    private static void type(By by, String text) {
        WebElement input = visible(by);
        input.clear();
        input.sendKeys(text);
    }

    private static WebElement visible(By by) {
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> driver.findElement(by).isDisplayed());
        return driver.findElement(by);
    }

    private static void awaitText(By by, String expected) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .untilAsserted(() -> {
                    String text = driver.findElement(by).getText();
                    assertTrue(text.contains(expected), "expected «" + expected + "» in «" + text + "»");
                });
    }

    private static Object script(String code) {
        return ((JavascriptExecutor) driver).executeScript(code);
    }

    /**
     * A handler whose failures carry hostile markup as their error text: permanent failures while
     * {@code failing}, successes after.
     */
    private static final class HostileHandler implements AutoCloseable {

        final AtomicBoolean failing = new AtomicBoolean(true);
        private final HttpServer server;

        private HostileHandler(HttpServer server) {
            this.server = server;
        }

        static HostileHandler start() {
            try {
                HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
                HostileHandler handler = new HostileHandler(server);
                server.createContext("/", handler::handle);
                server.start();
                return handler;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort() + "/hostile/" + DemoIntegration.HANDLER_KEY;
        }

        private void handle(HttpExchange exchange) throws IOException {
            try (exchange) {
                JsonNode request = Json.parse(exchange.getRequestBody().readAllBytes());
                ArrayNode results = Json.array();
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = Json.object().put("itemId", item.path("itemId").asText()).put("ok", !failing.get());
                    if (failing.get()) {
                        result.put("error", HOSTILE_ERROR).put("retryable", false);
                    }
                    results.add(result);
                }
                ObjectNode answer = Json.object();
                answer.set("results", results);
                byte[] body = Json.write(answer).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            }
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
