package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;
import static dev.runner.cli.Output.Column.field;

/** {@code runner runs …}: POST /runs, GET /runs, GET /runs/{runId}, its watch, cancel and redrive. */
@Command(name = "runs", description = "Start, list, show, watch, cancel and redrive runs.",
        subcommands = {RunsCommand.Start.class, RunsCommand.ListRuns.class, RunsCommand.Show.class, RunsCommand.Watch.class,
                RunsCommand.Cancel.class, RunsCommand.Redrive.class})
final class RunsCommand {

    static final List<Output.Column> RUN_COLUMNS = List.of(
            field("RUN", "runId"), field("STATUS", "status"), field("TRIGGER", "trigger"), field("TENANT", "tenantId"),
            new Output.Column("HANDLER", run -> run.path("integrationKey").asText() + "/" + run.path("handlerKey").asText()),
            new Output.Column("SUCCEEDED", run -> run.path("counts").path("succeeded").asText()),
            new Output.Column("DEAD", run -> run.path("counts").path("dead").asText()),
            new Output.Column("TOTAL", run -> run.path("counts").path("total").asText()),
            field("CREATED", "createdAt"));

    /** Options shared by the commands that watch a run. */
    static final class WatchOptions {
        @Option(names = "--interval", defaultValue = "PT1S", paramLabel = "DURATION",
                description = "How often to read the run, ISO-8601 (default ${DEFAULT-VALUE}).")
        Duration interval;

        @Option(names = "--progress", defaultValue = "auto",
                description = "bar (redrawn in place), lines (one per change) or auto: bar on a terminal. Default: ${DEFAULT-VALUE}.")
        RunWatcher.Style style;
    }

    @Command(name = "start", description = "Start a manual run (POST /runs).")
    static final class Start extends RunnerCli.Call {
        @Option(names = "--tenant", required = true) String tenant;
        @Option(names = "--integration", required = true) String integration;
        @Option(names = "--handler", required = true) String handler;
        @Option(names = "--idempotency-key", description = "A retry with the same key answers the same run.") String idempotencyKey;
        @Option(names = "--watch", description = "Then watch it until it ends (exit codes as runs watch).") boolean watch;
        @picocli.CommandLine.Mixin WatchOptions watching;

        @Override
        public Integer call() {
            ObjectNode body = ApiClient.JSON.createObjectNode().put("tenantId", tenant).put("integrationKey", integration)
                    .put("handlerKey", handler);
            ApiClient.Answer answer = accepted(api().post("/runs", body, idempotencyKey == null ? Map.of() : Map.of("Idempotency-Key", idempotencyKey)));
            String runId = answer.body().path("runId").asText();
            if (watch) {
                return new RunWatcher(api(), out(), watching.style, watching.interval).watch(runId);
            }
            out().show(answer.body(), () -> out().line("run " + runId + " started"));
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "list", description = "Runs, newest first (GET /runs).")
    static final class ListRuns extends RunnerCli.Call {
        @Option(names = "--tenant") String tenant;
        @Option(names = "--integration") String integration;
        @Option(names = "--handler") String handler;
        @Option(names = "--trigger", description = "webhook, manual, queue or schedule") String trigger;
        @Option(names = "--status", description = "queued, fetching, running, completed, completed_with_errors, failed or cancelled") String status;
        @picocli.CommandLine.Mixin Output.Paging paging;

        @Override
        public Integer call() {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("tenantId", tenant);
            query.put("integrationKey", integration);
            query.put("handlerKey", handler);
            query.put("trigger", trigger);
            query.put("status", status);
            paging.into(query, "before");
            JsonNode body = accepted(api().get("/runs", query)).body();
            out().table(body, body.path("runs"), RUN_COLUMNS, "no run matches");
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "show", description = "A run and its counts (GET /runs/{runId}); with --items, its items too.")
    static final class Show extends RunnerCli.Call {
        @Parameters(paramLabel = "RUN_ID") String runId;
        @Option(names = "--items", description = "Also list its items (GET /runs/{runId}/items).") boolean items;
        @Option(names = "--status", description = "With --items: only items of this status.") String status;

        @Override
        public Integer call() {
            JsonNode run = accepted(api().get("/runs/" + segment(runId), Map.of())).body();
            Output out = out();
            if (!items) {
                showRun(out, run);
                return RunnerCli.Exit.DONE.code;
            }
            Map<String, String> query = new LinkedHashMap<>();
            query.put("status", status);
            query.put("limit", "500");
            JsonNode page = accepted(api().get("/runs/" + segment(runId) + "/items", query)).body();
            if (out.json()) {
                ObjectNode both = ApiClient.JSON.createObjectNode();
                both.set("run", run);
                both.set("items", page);
                out.show(both, () -> { });
                return RunnerCli.Exit.DONE.code;
            }
            showRun(out, run);
            out.writer().println();
            out.table(page, page.path("items"), List.of(field("ITEM", "itemId"), field("EXTERNAL ID", "externalId"),
                    field("STATUS", "status"), field("ATTEMPTS", "attempts"), new Output.Column("WAITING", RunsCommand::waiting),
                    field("LAST ERROR", "lastError")), "no item");
            return RunnerCli.Exit.DONE.code;
        }
    }

    static void showRun(Output out, JsonNode run) {
        out.show(run, () -> {
            out.printFacts(run, "run", "runId", "status", "status", "tenant", "tenantId", "integration", "integrationKey",
                    "handler", "handlerKey", "trigger", "trigger", "created", "createdAt", "finished", "finishedAt");
            if (run.has("error")) {
                out.fact("error", run.path("error").asText());
            }
            out.fact("items", Progress.of(run, 0, Duration.ZERO).line());
            long pending = run.path("counts").path("pending").asLong();
            if (pending > 0) {
                out.fact("pending", pending + " waiting for their handler's callback (runs show --items --status pending)");
            }
        });
    }

    /** How long a pending item has waited for its callback (docs/handler-contract.md, callbacks); empty for any other item. */
    static String waiting(JsonNode item) {
        if (!item.path("pendingSince").isTextual()) {
            return "";
        }
        Duration waited = Duration.between(java.time.Instant.parse(item.path("pendingSince").asText()), java.time.Instant.now());
        long seconds = Math.max(0, waited.toSeconds());
        return seconds < 90 ? seconds + " s" : seconds < 5400 ? Math.round(seconds / 60.0) + " min"
                : seconds / 3600 + " h " + (seconds % 3600) / 60 + " min";
    }

    @Command(name = "watch", description = "Follow a run until it ends: a live bar on a terminal, a line per change otherwise.")
    static final class Watch extends RunnerCli.Call {
        @Parameters(paramLabel = "RUN_ID") String runId;
        @picocli.CommandLine.Mixin WatchOptions watching;

        @Override
        public Integer call() {
            return new RunWatcher(api(), out(), watching.style, watching.interval).watch(runId);
        }
    }

    @Command(name = "cancel", description = "Cancel a run: its items not yet called never will be (POST /runs/{runId}/cancel);"
            + " a large run's are ended a page at a time (--wait follows it).")
    static final class Cancel extends RunnerCli.Call {
        @Parameters(paramLabel = "RUN_ID") String runId;
        @picocli.CommandLine.Mixin ActionsCommand.WaitOptions waiting;

        @Override
        public Integer call() {
            JsonNode run = accepted(api().post("/runs/" + segment(runId) + "/cancel", ApiClient.JSON.createObjectNode(), Map.of())).body();
            out().show(run, () -> out().line("run " + runId + " cancelled: "
                    + run.path("counts").path("cancelled").asLong() + " items will not be called, "
                    + run.path("counts").path("processing").asLong() + " in flight finish"));
            return ActionsCommand.after(this, run.path("action"), waiting);
        }
    }

    @Command(name = "redrive", description = "Every dead item of a run back to work (POST /runs/{runId}/redrive), a page at a time"
            + " (--wait follows it).")
    static final class Redrive extends RunnerCli.Call {
        @Parameters(paramLabel = "RUN_ID") String runId;
        @picocli.CommandLine.Mixin ActionsCommand.WaitOptions waiting;

        @Override
        public Integer call() {
            JsonNode answer = accepted(api().post("/runs/" + segment(runId) + "/redrive", ApiClient.JSON.createObjectNode(), Map.of())).body();
            out().show(answer, () -> out().line(answer.path("redriven").asLong() + " dead items of run " + runId + " sent back to work"));
            return ActionsCommand.after(this, answer.path("action"), waiting);
        }
    }
}
