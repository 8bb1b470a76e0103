package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.json.Json;
import dev.runner.local.demo.DemoIntegration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.support.ui.Select;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The operator console in headless Chromium against the local runtime with real data, no fake
 * route: sign in, find a run, pause its handler and watch it complete after the resume, open a
 * dead item whose texts are hostile markup and redrive it, a tenant key's narrower view, queue
 * depth, tenant windows and the charts. One runtime and one browser serve the whole class; each
 * test makes its own tenant's data. Screenshots of every view go to local/target/console-screenshots/.
 * Skipped (not failed) when Chromium cannot be installed: see {@link HeadlessChromium}.
 */
class ConsoleIT {

    private static final String SECRET = "console-webhook-secret-0123";
    /** Low enough that one test's busy tenant has items waiting for its window, high enough for every other test. */
    private static final int TENANT_LIMIT = 40;
    /** Texts a handler or a sender controls; the console must show them as text, never run them. */
    private static final String HOSTILE_ERROR = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\">";
    private static final String HOSTILE_ID = "<b onmouseover=\"window.__pwned = 3\">bold</b>";
    /** Browser log lines the tests cause on purpose: a refused key (401) and another tenant's run (404). */
    private static final Pattern EXPECTED_LOG = Pattern.compile("Failed to load resource: the server responded with a status of 40[14] ");

    private static LocalRuntime runtime;
    private static RunnerApi api;
    private static HeadlessChromium browser;
    private static WebDriver driver;
    private static HostileHandler hostile;

    @BeforeAll
    static void start() {
        // Side by side: the runtime's embedded servers and the browser are most of the class's time.
        CompletableFuture<LocalRuntime> starting = CompletableFuture.supplyAsync(() -> LocalRuntime.start(
                LocalOptions.defaults(LocalRuntimeIT.projectTemplate(), Map.of(
                        "RUNNER_BACKOFF_BASE_MS", "200",
                        "RUNNER_TENANT_LIMIT_PER_MINUTE", Integer.toString(TENANT_LIMIT))).withFreePorts()));
        try {
            browser = HeadlessChromium.start(LocalRuntimeIT.projectTemplate().resolveSibling("local/target/console-screenshots"));
            driver = browser.driver();
        } finally {
            runtime = starting.join();
        }
        api = LocalRuntimeIT.checkedApi(runtime);
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

    /** Whatever a test did, the page logged no script error, no policy violation, no unexpected failed request. */
    @AfterEach
    void noScriptOrPolicyError() {
        List<String> problems = driver.manage().logs().get("browser").getAll().stream()
                .map(LogEntry::getMessage)
                .filter(message -> !EXPECTED_LOG.matcher(message).find())
                .toList();
        assertTrue(problems.isEmpty(), problems.toString());
    }

    @Test
    void servesThePageWithoutAKeyUnderAStrictPolicyAtTheAddressTheRuntimePrints() throws Exception {
        assertEquals(Optional.of(runtime.apiUrl().resolve("/console")), runtime.consoleUrl());
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> page = http.send(HttpRequest.newBuilder(runtime.consoleUrl().orElseThrow()).build(),
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

        signIn(runtime.apiKey());
        awaitText(By.id("who"), "Signed in: admin");
        assertEquals(List.of("Runs", "Dead items", "Handlers", "Tenants", "Queues", "Charts"), visibleViews());
        assertEquals(runtime.apiKey(), script("return sessionStorage.getItem('runner.console.key')"));
        assertEquals(0L, script("return localStorage.length"));
        assertEquals("", script("return document.cookie"));
        assertFalse(driver.getCurrentUrl().contains(runtime.apiKey()), driver.getCurrentUrl());

        driver.findElement(By.id("signout")).click();
        visible(By.id("signin-key"));
        assertNull(script("return sessionStorage.getItem('runner.console.key')"));
    }

    @Test
    void findsARunByItsFiltersNewestFirstPageByPage() {
        String integration = "it-console-find";
        String tenant = "t-console-find";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 1).put("pageSize", 1));
        List<String> manual = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            manual.add(api.startRun(tenant, integration));
        }
        String webhook = RunnerApi.require(api.webhook(tenant, integration, SECRET, "{\"externalId\":\"w-1\"}"), 202)
                .body().path("runId").asText();
        List<String> all = List.of(manual.get(0), manual.get(1), manual.get(2), webhook);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> all.stream().allMatch(run -> api.run(run).path("status").asText().equals("completed")));

        driver.get(console("pageSize=2"));
        signIn(runtime.apiKey());
        type(By.id("f-tenant"), tenant);
        click(By.xpath("//button[normalize-space()='Apply']"));
        awaitRunLinks(List.of(webhook, manual.get(2)));
        assertTrue(driver.getCurrentUrl().endsWith("#/runs?tenantId=" + tenant), driver.getCurrentUrl());
        browser.fullPageScreenshot("02-runs");

        click(By.xpath("//button[normalize-space()='Older']"));
        awaitRunLinks(List.of(manual.get(1), manual.get(0)));
        assertEquals("true", attributeOf(By.xpath("//button[normalize-space()='Older']"), "disabled"), "the last page");
        awaitText(By.cssSelector("main .pager"), "Page 2");
        click(By.xpath("//button[normalize-space()='Newer']"));
        awaitRunLinks(List.of(webhook, manual.get(2)));

        new Select(driver.findElement(By.id("f-trigger"))).selectByValue("webhook");
        new Select(driver.findElement(By.id("f-status"))).selectByValue("completed");
        click(By.xpath("//button[normalize-space()='Apply']"));
        awaitRunLinks(List.of(webhook));
        assertTrue(driver.getCurrentUrl().endsWith("#/runs?tenantId=" + tenant + "&trigger=webhook&status=completed"),
                driver.getCurrentUrl());
        new Select(driver.findElement(By.id("f-status"))).selectByValue("failed");
        click(By.xpath("//button[normalize-space()='Apply']"));
        awaitText(By.id("main"), "No run matches these filters.");

        new Select(driver.findElement(By.id("f-trigger"))).selectByValue("manual");
        new Select(driver.findElement(By.id("f-status"))).selectByValue("");
        click(By.xpath("//button[normalize-space()='Apply']"));
        awaitRunLinks(List.of(manual.get(2), manual.get(1)));
        click(By.cssSelector("main tbody a[title='" + manual.get(2) + "']"));
        awaitText(By.id("view-title"), "Run " + manual.get(2));
        awaitText(By.cssSelector("main dl"), "completed");
        awaitText(By.cssSelector("main dl"), "1 succeeded · 0 dead · 0 open of 1");
    }

    /** A paused handler parks a run's items; resumed from the console, the run completes on screen. */
    @Test
    void watchesARunCompleteAfterItsPausedHandlerIsResumed() {
        String integration = "it-console-pause";
        String tenant = "t-console-pause";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 20, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 2).put("pageSize", 5));
        signIn(runtime.apiKey());

        openView("Handlers");
        click(By.cssSelector("button[aria-label='Pause " + integration + "/contacts']"));
        awaitText(By.id("status"), integration + "/contacts paused: its items wait parked until it is resumed.");
        visible(By.cssSelector("button[aria-label='Resume " + integration + "/contacts']"));

        String runId = api.startRun(tenant, integration);
        go("#/runs?tenantId=" + tenant);
        click(By.cssSelector("main tbody a[title='" + runId + "']"));
        awaitText(By.id("view-title"), "Run " + runId);
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("counts").path("parked").asInt() == 10);
        awaitText(By.cssSelector("main dl"), "0 succeeded · 0 dead · 10 open of 10");
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
            List<String> statuses = driver.findElements(By.cssSelector("main tbody tr td:nth-child(2)")).stream().map(WebElement::getText).toList();
            return statuses.size() == 10 && statuses.stream().allMatch("parked"::equals);
        });
        assertEquals(0.0, succeededWidth());
        browser.fullPageScreenshot("03-run-parked");

        openView("Handlers");
        awaitText(handlerRow(integration), "Paused since");
        assertEquals("10", textOf(By.xpath(rowXpath(integration + " / contacts") + "/td[6]")), "parked items of the handler");
        browser.fullPageScreenshot("04-handlers-paused");
        click(By.cssSelector("button[aria-label='Resume " + integration + "/contacts']"));
        awaitText(By.id("status"), integration + "/contacts resumed; 10 parked items sent back to work.");
        awaitText(handlerRow(integration), "Running");
        // Its breaker and how close it is to the limits the type was put with (20 in flight, 600,000 a minute).
        awaitText(handlerRow(integration), "Closed");
        awaitText(handlerRow(integration), " of 20 calls in flight");
        awaitText(handlerRow(integration), " of " + format(600000) + " calls in the last minute");

        go("#/runs/" + runId);
        List<Double> widths = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            widths.add(succeededWidth());
            return driver.findElement(By.cssSelector("main dl")).getText().contains("10 succeeded · 0 dead · 0 open of 10");
        });
        assertEquals(100.0, succeededWidth(), "the bar is all succeeded: " + widths);
        for (int i = 1; i < widths.size(); i++) {
            assertTrue(widths.get(i) >= widths.get(i - 1), "the bar only grows: " + widths);
        }
        awaitText(By.cssSelector("main dl"), "completed");
        browser.fullPageScreenshot("05-run-completed");
    }

    /** A run whose items wait parked is cancelled from its page, after a confirmation: none of them will be called. */
    @Test
    void cancelsAnOpenRunFromItsPageAfterAConfirmation() {
        String integration = "it-console-cancel";
        String tenant = "t-console-cancel";
        String handler = "/handlers/" + integration + "/" + DemoIntegration.HANDLER_KEY;
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 20, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 2).put("pageSize", 5));
        RunnerApi.require(api.post(handler + "/pause", Json.object()), 200);
        try {
            String runId = api.startRun(tenant, integration);
            await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("counts").path("parked").asInt() == 10);
            signIn(runtime.apiKey());
            go("#/runs/" + runId);
            awaitText(By.id("view-title"), "Run " + runId);

            click(By.cssSelector("[data-key='cancel-run']"));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() ->
                    "cancel-confirm".equals(driver.switchTo().activeElement().getDomAttribute("data-key")));
            browser.fullPageScreenshot("05a-run-cancel-confirm");
            click(By.cssSelector("[data-key='cancel-confirm']"));
            awaitText(By.id("status"), "cancelled: 10 items will not be called.");
            awaitText(By.cssSelector("main dl"), "0 succeeded · 0 dead · 10 cancelled · 0 open of 10");
            awaitText(By.cssSelector("main dl"), "cancelled");
            assertTrue(driver.findElements(By.cssSelector("[data-key='cancel-run']")).isEmpty(), "a cancelled run offers no cancel");
            browser.fullPageScreenshot("05b-run-cancelled");
            JsonNode run = api.run(runId);
            assertEquals("cancelled", run.path("status").asText());
            assertEquals(10, run.path("counts").path("cancelled").asInt(), run.toString());
        } finally {
            RunnerApi.require(api.post(handler + "/resume", Json.object()), 200);
        }
    }

    @Test
    void opensADeadItemShowsItsHostileTextsAsTextAndRedrivesIt() {
        String integration = "it-console-dead";
        String tenant = "t-console-dead";
        api.putType(integration, hostile.url(), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object());
        hostile.failing.set(true);
        String hostileRun = webhookRun(tenant, integration, Json.object().put("externalId", HOSTILE_ID).put("name", HOSTILE_ERROR));
        String plainRun = webhookRun(tenant, integration, Json.object().put("externalId", "plain-2"));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() ->
                api.run(hostileRun).path("status").asText().equals("completed_with_errors")
                        && api.run(plainRun).path("status").asText().equals("completed_with_errors"));
        JsonNode deadItems = RunnerApi.require(api.get("/items?status=dead&tenantId=" + tenant), 200).body().path("items");
        List<String> newestDeadFirst = new ArrayList<>();
        deadItems.forEach(item -> newestDeadFirst.add(item.path("externalId").asText()));
        JsonNode dead = deadItems.get(newestDeadFirst.indexOf(HOSTILE_ID));

        signIn(runtime.apiKey());
        openView("Dead items");
        type(By.id("f-tenant"), tenant);
        click(By.xpath("//button[normalize-space()='Apply']"));
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> itemLinks().equals(newestDeadFirst));
        assertEquals(2, newestDeadFirst.size(), newestDeadFirst.toString());
        assertTrue(textOf(By.cssSelector("main tbody")).contains(HOSTILE_ERROR), "the error text shown as it is");
        await().atMost(Duration.ofSeconds(15)).ignoreExceptions().until(() -> {
            new Actions(driver).moveToElement(driver.findElement(By.cssSelector("main tbody a[title='" + dead.path("itemId").asText() + "']")))
                    .perform();
            return true;
        });
        assertNull(script("return window.__pwned ?? null"), "untrusted text ran as code");
        assertTrue(driver.findElements(By.cssSelector("main img, main script, main b")).isEmpty(), "untrusted text became markup");
        browser.fullPageScreenshot("06-dead-items");

        click(By.cssSelector("main tbody a[title='" + dead.path("itemId").asText() + "']"));
        awaitText(By.id("view-title"), "Item " + dead.path("itemId").asText());
        awaitText(By.id("item-facts"), "dead");
        assertEquals(HOSTILE_ID, fact("External id"));
        assertEquals("dead", fact("Status"));
        assertEquals("1", fact("Attempts"));
        assertEquals(HOSTILE_ERROR, fact("Last error"));
        assertEquals(dead.path("dlqAt").asText(),
                attributeOf(By.xpath("//main//dt[normalize-space()='Dead at (dlq_at)']/following-sibling::dd[1]/time"), "datetime"));
        assertTrue(textOf(By.cssSelector("ol.history")).contains("Attempt 1"), textOf(By.cssSelector("ol.history")));
        assertTrue(textOf(By.cssSelector("ol.history")).contains(HOSTILE_ERROR));
        assertTrue(textOf(By.id("item-payload")).contains("<script>window.__pwned = 1</script>"), textOf(By.id("item-payload")));
        assertNull(script("return window.__pwned ?? null"), "untrusted text ran as code");
        assertTrue(driver.findElements(By.cssSelector("main img, main script, main b")).isEmpty(), "untrusted text became markup");
        browser.fullPageScreenshot("07-item-dead");

        hostile.failing.set(false);
        click(By.xpath("//main//button[normalize-space()='Redrive']"));
        awaitText(By.id("status"), " sent back to work.");
        awaitText(By.id("item-facts"), "succeeded");
        assertEquals("succeeded", fact("Status"));
        browser.fullPageScreenshot("08-item-redriven");
        await().atMost(Duration.ofSeconds(15)).until(() -> api.run(hostileRun).path("status").asText().equals("completed"));

        // The other one in bulk: every dead item of the tenant, after a confirmation.
        openView("Dead items");
        type(By.id("f-tenant"), tenant);
        click(By.xpath("//button[normalize-space()='Apply']"));
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> itemLinks().equals(List.of("plain-2")));
        click(By.cssSelector("[data-key='bulk-ask']"));
        assertEquals("bulk-confirm", driver.switchTo().activeElement().getDomAttribute("data-key"), "focus moves to the confirmation");
        new Actions(driver).sendKeys(Keys.ENTER).perform();
        awaitText(By.id("status"), "1 dead items of 1 runs sent back to work.");
        awaitText(By.id("main"), "No dead item matches these filters.");
        await().atMost(Duration.ofSeconds(15)).until(() -> api.run(plainRun).path("status").asText().equals("completed"));
    }

    /** A tenant key sees its own tenant only: the shared views are gone, the tenant filter is fixed, other runs are absent. */
    @Test
    void aTenantKeySeesOnlyItsOwnTenant() {
        String integration = "it-console-scope";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant("t-console-own", integration, SECRET, Json.object().put("pages", 1).put("pageSize", 1));
        api.putTenant("t-console-other", integration, SECRET, Json.object().put("pages", 1).put("pageSize", 1));
        String own = api.startRun("t-console-own", integration);
        String other = api.startRun("t-console-other", integration);
        String key = api.createKey("t-console-own", "console test");

        signIn(key);
        awaitText(By.id("who"), "Signed in: tenant t-console-own");
        assertEquals(List.of("Runs", "Dead items", "Tenants"), visibleViews());
        WebElement tenantField = visible(By.id("f-tenant"));
        assertEquals("t-console-own", tenantField.getDomProperty("value"));
        assertNotNull(tenantField.getDomAttribute("readonly"), "a tenant key cannot choose another tenant");
        awaitRunLinks(List.of(own));
        browser.fullPageScreenshot("12-tenant-key-runs");

        go("#/runs/" + other);
        awaitText(By.id("main"), "No run " + other);
        go("#/handlers");
        awaitText(By.id("view-title"), "Runs");
        assertTrue(driver.getCurrentUrl().endsWith("#/runs"), driver.getCurrentUrl());
        openView("Tenants");
        await().atMost(Duration.ofSeconds(15)).ignoreExceptions().until(() -> driver.findElements(By.cssSelector("main tbody th"))
                .stream().map(WebElement::getText).toList().equals(List.of("t-console-own")));
    }

    /**
     * More items than the tenant's window takes in a minute: the rest wait, which the queues, the
     * tenants and the deferrals chart show, next to the items that succeeded.
     */
    @Test
    void showsQueueDepthTenantWindowsAndChartsFromRealData() {
        String integration = "it-console-busy";
        String tenant = "t-console-busy";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 5).put("pageSize", 10));
        String runId = api.startRun(tenant, integration);
        // Fanned out: the window's slots of this minute are taken and the rest wait for the next one's.
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("counts").path("total").asInt() == 50);

        signIn(runtime.apiKey());
        openView("Queues");
        By manualTier = By.cssSelector("main tr[data-queue='items-manual']");
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            List<String> cells = driver.findElement(manualTier).findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
            assertEquals("manual (priority 2)", cells.get(1), cells.toString());
            assertTrue(Integer.parseInt(cells.get(5)) > 0, "the items over the window wait: " + cells);
            assertTrue(cells.get(6).matches("\\d+ (s|min)"), "the oldest one's age: " + cells);
        });
        browser.fullPageScreenshot("10-queues");

        // The window's use and the items waiting for a slot move as the worker admits, defers and refunds: the page shows the API's.
        openView("Tenants");
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            JsonNode busy = null;
            for (JsonNode row : RunnerApi.require(api.get("/tenants?limit=500"), 200).body().path("tenants")) {
                busy = row.path("tenantId").asText().equals(tenant) ? row : busy;
            }
            long used = busy.path("window").path("usedLastMinute").asLong();
            long waiting = busy.path("deferred").asLong();
            assertTrue(used > 0 && waiting > 0, busy.toString());
            String shown = textOf(By.xpath(rowXpath(tenant)));
            assertTrue(shown.contains(format(used) + " of " + TENANT_LIMIT + " items"), shown);
            assertTrue(shown.contains(format(waiting) + " waiting for a slot"), shown);
        });
        browser.fullPageScreenshot("09-tenants");

        openView("Charts");
        awaitText(By.id("main"), "Deferrals per minute by reason");
        // The page's totals are the API's: the outcomes from Postgres, the deferrals the guard counted in Redis
        // (here handler concurrency, five calls at a time, and the tenant window).
        Map<String, String> reasons = Map.of("breaker_open", "Breaker open", "breaker_probing", "Breaker probing",
                "handler_rate", "Handler rate", "handler_concurrency", "Handler concurrency", "tenant_limit", "Tenant window");
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            JsonNode minutes = RunnerApi.require(api.get("/metrics/items?minutes=60"), 200).body().path("minutes");
            String legends = String.join(" ", driver.findElements(By.cssSelector("main ul.legend li")).stream().map(WebElement::getText).toList());
            long succeeded = total(minutes, "succeeded");
            assertTrue(succeeded > 0 && total(minutes, "deferred") > 0, minutes.toString());
            assertTrue(legends.contains("Succeeded: " + format(succeeded)), legends);
            for (var reason : reasons.entrySet()) {
                long deferred = 0;
                for (JsonNode minute : minutes) {
                    deferred += minute.path("deferredBy").path(reason.getKey()).asLong();
                }
                assertTrue(legends.contains(reason.getValue() + ": " + format(deferred)), reason.getValue() + " in " + legends);
            }
        });
        assertEquals(2, driver.findElements(By.cssSelector("main figure svg.plot[role='img']")).size());
        assertFalse(driver.findElements(By.cssSelector("main figure svg.plot rect.f-succeeded")).isEmpty(), "bars of succeeded items");
        assertFalse(driver.findElements(By.cssSelector("main figure svg.plot rect[class^='f-handler'], main figure svg.plot rect.f-tenant_limit"))
                .isEmpty(), "bars of deferrals");
        browser.fullPageScreenshot("11-charts");

        // README's picture (docs/images/console.png is this file through pngquant): every run so far, this one still going.
        openView("Runs");
        awaitText(By.cssSelector("main tbody"), "running");
        browser.screenshot("readme-runs", 1280, 600);
    }

    /** Every view reached from the keyboard alone, with a visible focus. */
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

        for (String view : List.of("Dead items", "Handlers", "Tenants", "Queues", "Charts", "Runs")) {
            WebElement link = tabBackTo(view);
            assertTrue(!"none".equals(link.getCssValue("outline-style")), view + " link has no visible focus");
            new Actions(driver).sendKeys(Keys.ENTER).perform();
            awaitText(By.id("view-title"), view);
            assertEquals("view-title", driver.switchTo().activeElement().getDomAttribute("id"), "focus moves to the view's heading");
            assertEquals("page", link.getDomAttribute("aria-current"));
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The page with a one-second live refresh, so the tests watch changes within seconds. */
    private static String console(String... parameters) {
        return runtime.apiUrl().resolve("/console?refresh=1" + (parameters.length == 0 ? "" : "&" + String.join("&", parameters))).toString();
    }

    private void signIn(String key) {
        type(By.id("signin-key"), key);
        driver.findElement(By.id("signin-submit")).click();
        visible(By.id("view-title"));
    }

    /** Another view of the page already open, as a link would go (no reload). */
    private static void go(String hash) {
        script("location.hash = arguments[0]", hash);
    }

    private static String webhookRun(String tenant, String integration, ObjectNode item) {
        return RunnerApi.require(api.webhook(tenant, integration, SECRET, Json.write(item)), 202).body().path("runId").asText();
    }

    private static List<String> visibleViews() {
        return driver.findElements(By.cssSelector("nav a")).stream().filter(WebElement::isDisplayed).map(WebElement::getText).toList();
    }

    private static void awaitRunLinks(List<String> runIds) {
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() ->
                assertEquals(runIds, driver.findElements(By.cssSelector("main tbody a[title]")).stream()
                        .map(a -> a.getDomAttribute("title")).toList()));
    }

    /** The external ids of the items listed, as shown. */
    private static List<String> itemLinks() {
        return driver.findElements(By.cssSelector("main tbody a[href^='#/items/']")).stream().map(WebElement::getText).toList();
    }

    /** The description of a term in the view's facts. */
    private static String fact(String term) {
        return textOf(By.xpath("//main//dt[normalize-space()='" + term + "']/following-sibling::dd[1]"));
    }

    /** The row whose header cell names this handler or tenant. */
    private static String rowXpath(String name) {
        return "//main//tbody/tr[th[contains(normalize-space(), '" + name + "')]]";
    }

    private static By handlerRow(String integration) {
        return By.xpath(rowXpath(integration + " / contacts"));
    }

    /** How much of the run's progress bar is succeeded, 0..100; read in one script, as the live refresh redraws it. */
    private static double succeededWidth() {
        Object width = script("return document.querySelector('main dl .progress rect.f-succeeded')?.getAttribute('width') ?? null");
        assertNotNull(width, "no progress bar on screen");
        return Double.parseDouble(width.toString());
    }

    private static long total(JsonNode minutes, String field) {
        long total = 0;
        for (JsonNode minute : minutes) {
            total += minute.path(field).asLong();
        }
        return total;
    }

    /** A count as the page writes it (the browser runs in en-US). */
    private static String format(long n) {
        return String.format(Locale.US, "%,d", n);
    }

    private void openView(String name) {
        click(By.linkText(name));
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

    /** An attribute of what the live refresh may be redrawing: read again until it holds still. */
    private static String attributeOf(By by, String name) {
        return await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> driver.findElement(by).getDomAttribute(name), value -> true);
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

    private static Object script(String code, Object... arguments) {
        return ((JavascriptExecutor) driver).executeScript(code, arguments);
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
