package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.cli.RunnerCli;
import dev.runner.json.Json;
import dev.runner.local.demo.DemoIntegration;
import dev.runner.testing.OpenApiAnswers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bin/runner's commands against the local runtime with Runner's own functions, as an operator types
 * them: what they print (the live bar included), their exit codes, and their --output json, which is
 * the API's answer and so validates against the OpenAPI document.
 */
class CliIT {

    private static final String SECRET = "it-cli-webhook-secret-01";
    private static LocalRuntime runtime;
    private static RunnerApi api;

    /** What one command line printed and how it exited. */
    record Ran(int exit, String out, String err) {
        JsonNode json() {
            return Json.parse(out);
        }
    }

    @BeforeAll
    static void start() {
        runtime = LocalRuntimeIT.startProject(Map.of(
                "RUNNER_BACKOFF_BASE_MS", "200",
                "RUNNER_BREAKER_FAILURE_THRESHOLD", "100000",
                "RUNNER_TENANT_LIMIT_PER_MINUTE", "1000000"));
        api = LocalRuntimeIT.checkedApi(runtime);
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void startsARunWatchesItCompleteAndFindsIt() {
        String integration = "it-cli-ok";
        String tenant = "t-cli-ok";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 10, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 3).put("pageSize", 20).put("delayMs", 30));

        Ran started = runner("runs", "start", "--tenant", tenant, "--integration", integration, "--handler", DemoIntegration.HANDLER_KEY,
                "--output", "json");
        assertEquals(0, started.exit(), started.err());
        String runId = started.json().path("runId").asText();
        OpenApiAnswers.load().check("POST", "/runs", 202, started.out());

        Ran watched = runner("runs", "watch", runId, "--interval", "PT0.2S", "--progress", "lines");
        assertEquals(0, watched.exit(), watched.err());
        List<String> lines = watched.out().lines().toList();
        assertTrue(lines.getLast().equals("run " + runId + " completed"), watched.out());
        assertTrue(lines.get(lines.size() - 2).startsWith("completed 60 succeeded, 0 dead, 0 open of 60"), watched.out());
        assertTrue(lines.stream().noneMatch(line -> line.contains("\r")), "no redrawing off a terminal");

        Ran shown = runner("runs", "show", runId, "--output", "json");
        OpenApiAnswers.load().check("GET", "/runs/" + runId, 200, shown.out());
        Ran text = runner("runs", "show", runId, "--items", "--status", "succeeded");
        assertTrue(text.out().contains("status:        completed"), text.out());
        assertTrue(text.out().contains("items:         completed 60 succeeded, 0 dead, 0 open of 60"), text.out());
        assertTrue(text.out().contains("p2-i19"), "its items are listed: " + text.out());

        Ran listed = runner("runs", "list", "--tenant", tenant);
        assertEquals(0, listed.exit());
        assertTrue(listed.out().lines().findFirst().orElseThrow().startsWith("RUN "), listed.out());
        assertTrue(listed.out().contains(runId + "  completed  manual"), listed.out());
        OpenApiAnswers.load().check("GET", "/runs", 200, runner("runs", "list", "--tenant", tenant, "--output", "json").out());
    }

    /** On a terminal the bar is drawn in place, line over line; the end is a line of its own. */
    @Test
    void drawsALiveProgressBarOnATerminal() {
        String integration = "it-cli-bar";
        String tenant = "t-cli-bar";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 4, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 2).put("pageSize", 20).put("delayMs", 50));
        Ran bar = runner("runs", "start", "--tenant", tenant, "--integration", integration, "--handler", DemoIntegration.HANDLER_KEY,
                "--watch", "--progress", "bar", "--interval", "PT0.1S");
        assertEquals(0, bar.exit(), bar.err());
        String[] frames = bar.out().split("\r\u001b\\[2K");
        assertTrue(frames.length > 2, "redrawn as the run moves: " + frames.length + " frames");
        String last = frames[frames.length - 1];
        assertTrue(last.startsWith("completed    [==============================] 40 succeeded, 0 dead, 0 open of 40"), last);
        assertTrue(last.endsWith("completed" + System.lineSeparator()), last);
        boolean midway = false;
        for (String frame : frames) {
            midway |= frame.matches("(?s)running +\\[=*\\.+] \\d+ succeeded, 0 dead, \\d+ open of 40 \\| [\\d.]+/s.*");
        }
        assertTrue(midway, "a frame shows the run under way: " + List.of(frames));
    }

    /** Dead items: watch says so in its exit code; listed; redriven (one, and the run's) through the CLI. */
    @Test
    void deadItemsAreWatchedListedAndRedriven() {
        String integration = "it-cli-dead";
        String tenant = "t-cli-dead";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 1).put("pageSize", 3).put("reject", true));
        String runId = api.startRun(tenant, integration);

        Ran watched = runner("runs", "watch", runId, "--interval", "PT0.2S", "--progress", "lines");
        assertEquals(3, watched.exit(), "completed_with_errors: " + watched.out() + watched.err());
        Ran dead = runner("dead", "list", "--tenant", tenant, "--output", "json");
        OpenApiAnswers.load().check("GET", "/items", 200, dead.out());
        assertEquals(3, dead.json().path("items").size(), dead.out());
        String itemId = dead.json().path("items").get(0).path("itemId").asText();
        Ran table = runner("dead", "list", "--tenant", tenant);
        assertTrue(table.out().contains("demo item configured to fail"), table.out());

        Ran one = runner("dead", "redrive", itemId);
        assertEquals("item " + itemId + " sent back to work", one.out().strip());
        Ran again = runner("runs", "watch", runId, "--interval", "PT0.2S", "--progress", "lines");
        assertEquals(3, again.exit(), again.out());
        Ran all = runner("runs", "redrive", runId, "--output", "json");
        OpenApiAnswers.load().check("POST", "/runs/" + runId + "/redrive", 202, all.out());
        assertEquals(3, all.json().path("redriven").asInt(), all.out());
        assertEquals(3, runner("runs", "watch", runId, "--interval", "PT0.2S", "--progress", "lines").exit());
        Ran bulk = runner("dead", "redrive", "--tenant", tenant, "--limit", "2");
        assertEquals("2 dead items of 1 runs sent back to work; 1 remain", bulk.out().strip());
        Ran none = runner("dead", "redrive");
        assertEquals(1, none.exit(), "a bulk redrive needs a filter");
        assertTrue(none.err().contains("400 bad_request: give at least one of"), none.err());
    }

    /**
     * What a webhook sender or a handler chose (an externalId, a last error) is printed with its control characters
     * escaped: an item named with terminal escape sequences cannot clear the screen or retitle the window.
     */
    @Test
    void controlCharactersAHandlerOrSenderChoseAreShownEscaped() {
        String integration = "it-cli-escapes";
        String tenant = "t-cli-escapes";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object());
        String body = Json.write(Json.object().put("externalId", "e-\u001b]0;owned\u0007\u001b[2J"));
        String runId = RunnerApi.require(api.webhook(tenant, integration, SECRET, body), 202).body().path("runId").asText();
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("status").asText().startsWith("completed"));

        Ran shown = runner("runs", "show", runId, "--items");
        assertEquals(0, shown.exit(), shown.err());
        assertTrue(shown.out().chars().noneMatch(c -> c == 0x1b || c == 0x07), shown.out());
        assertTrue(shown.out().contains("e-\\x1b]0;owned\\x07\\x1b[2J"), shown.out());
        Ran json = runner("runs", "show", runId, "--items", "--output", "json");
        assertTrue(json.out().chars().noneMatch(c -> c == 0x1b || c == 0x07), json.out());
    }

    /**
     * A paused handler keeps a run open, and the tenant's page says why its items wait; cancelled from the CLI, watch exits 4,
     * and a second cancel is the same.
     */
    @Test
    void pausesAHandlerCancelsItsRunAndResumesIt() {
        String integration = "it-cli-cancel";
        String tenant = "t-cli-cancel";
        api.putType(integration, runtime.demo().url(integration, DemoIntegration.HANDLER_KEY), 5, 600000);
        api.putTenant(tenant, integration, SECRET, Json.object().put("pages", 1).put("pageSize", 4));
        Ran paused = runner("handlers", "pause", integration, DemoIntegration.HANDLER_KEY);
        assertEquals(integration + "/" + DemoIntegration.HANDLER_KEY + " paused", paused.out().strip(), paused.err());
        Ran handlers = runner("handlers", "list");
        assertTrue(handlers.out().lines().anyMatch(line -> line.startsWith(integration) && line.contains("paused")), handlers.out());
        OpenApiAnswers.load().check("GET", "/handlers", 200, runner("handlers", "list", "--output", "json").out());

        String runId = api.startRun(tenant, integration);
        await().atMost(Duration.ofSeconds(30)).until(() -> api.run(runId).path("counts").path("parked").asInt() == 4);
        Ran why = runner("tenants", "show", tenant);
        assertTrue(why.out().contains(integration + "/" + DemoIntegration.HANDLER_KEY + ": 0 waiting, 0 held, 4 parked"), why.out() + why.err());
        assertTrue(why.out().contains("  paused (now): 4 items"), why.out());
        OpenApiAnswers.load().check("GET", "/tenants/" + tenant, 200, runner("tenants", "show", tenant, "--output", "json").out());
        Ran cancelled = runner("runs", "cancel", runId);
        assertEquals("run " + runId + " cancelled: 4 items will not be called, 0 in flight finish", cancelled.out().strip(), cancelled.err());
        Ran twice = runner("runs", "cancel", runId, "--output", "json");
        OpenApiAnswers.load().check("POST", "/runs/" + runId + "/cancel", 202, twice.out());
        assertEquals(4, runner("runs", "watch", runId, "--progress", "lines").exit());

        Ran resumed = runner("handlers", "resume", integration, DemoIntegration.HANDLER_KEY);
        assertEquals(integration + "/" + DemoIntegration.HANDLER_KEY + " resumed; 0 parked items sent back to work", resumed.out().strip());
        Ran finished = runner("runs", "cancel", runId.replace('0', '1'));
        assertEquals(1, finished.exit(), finished.out());
    }

    /** A tenant key made, listed and revoked from the CLI; the revoked key is refused at once. */
    @Test
    void createsListsAndRevokesATenantKey() {
        Ran created = runner("keys", "create", "--tenant", "t-cli-keys", "--name", "ci", "--output", "json");
        assertEquals(0, created.exit(), created.err());
        OpenApiAnswers.load().check("POST", "/keys", 201, created.out());
        String keyId = created.json().path("keyId").asText();
        String key = created.json().path("key").asText();

        Ran listed = runner("keys", "list", "--tenant", "t-cli-keys");
        assertTrue(listed.out().contains(keyId + "  t-cli-keys  ci"), listed.out());
        assertEquals(0, runnerWithKey(key, "runs", "list").exit(), "the tenant key works");
        Ran revoked = runner("keys", "revoke", keyId);
        assertTrue(revoked.out().startsWith("key " + keyId + " revoked at "), revoked.out());
        Ran refused = runnerWithKey(key, "runs", "list");
        assertEquals(1, refused.exit());
        assertTrue(refused.err().contains("401 unauthorized"), refused.err());
    }

    private static Ran runner(String... args) {
        return runnerWithKey(runtime.apiKey(), args);
    }

    /** As an operator runs it: the endpoint and the key from the environment, never on the command line. */
    private static Ran runnerWithKey(String key, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = RunnerCli.run(new PrintWriter(out, true), new PrintWriter(err, true),
                Map.of("RUNNER_ENDPOINT", runtime.apiUrl().toString(), "RUNNER_API_KEY", key), args);
        return new Ran(exit, out.toString(), err.toString());
    }
}
