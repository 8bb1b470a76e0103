package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;
import static dev.runner.cli.Output.Column.field;

/**
 * {@code runner actions …}: bulk actions (a run's redrive or cancel, a bulk redrive, a resume) and their progress,
 * GET /actions and GET /actions/{actionId}; the commands that start one follow it with {@code --wait}.
 */
@Command(name = "actions", description = "Bulk actions (redrive, cancel, resume, enable) and their progress.",
        subcommands = {ActionsCommand.Show.class, ActionsCommand.ListActions.class})
final class ActionsCommand {

    static final List<Output.Column> ACTION_COLUMNS = List.of(field("ACTION", "actionId"), field("KIND", "kind"),
            field("STATUS", "status"), field("TENANT", "tenantId"), field("DONE", "done"), field("TOTAL", "total"),
            field("ASKED", "askedAt"));

    /** How a command that starts an action waits for it. */
    static final class WaitOptions {
        @Option(names = "--wait", description = "Wait until the action is done, a line per page.") boolean wait;

        @Option(names = "--interval", defaultValue = "PT2S", paramLabel = "DURATION",
                description = "With --wait: how often to read the action, ISO-8601 (default ${DEFAULT-VALUE}).")
        Duration interval;
    }

    @Command(name = "show", description = "A bulk action: what it will do and has done (GET /actions/{actionId}).")
    static final class Show extends RunnerCli.Call {
        @Parameters(paramLabel = "ACTION_ID") String actionId;
        @picocli.CommandLine.Mixin WaitOptions waiting;

        @Override
        public Integer call() {
            JsonNode action = accepted(api().get("/actions/" + segment(actionId), Map.of())).body();
            if (waiting.wait) {
                return follow(this, action, waiting);
            }
            out().show(action, () -> out().line(progress(action)));
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "list", description = "Bulk actions, newest first (GET /actions).")
    static final class ListActions extends RunnerCli.Call {
        @Option(names = "--tenant") String tenant;
        @picocli.CommandLine.Mixin Output.Paging paging;

        @Override
        public Integer call() {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("tenantId", tenant);
            JsonNode body = accepted(api().get("/actions", paging.into(query, "before"))).body();
            out().table(body, body.path("actions"), ACTION_COLUMNS, "no action");
            return RunnerCli.Exit.DONE.code;
        }
    }

    /** "redrive 20 of 25 done, running (action …)": one line of where an action stands. */
    static String progress(JsonNode action) {
        return action.path("kind").asText() + " " + action.path("done").asLong() + " of " + action.path("total").asLong()
                + " done, " + action.path("status").asText() + " (action " + action.path("actionId").asText() + ")";
    }

    /**
     * After a command that started {@code action} (null or JSON null: nothing was left to do): with --wait, follows it
     * until it is done, a line whenever it moved; without, says where it stands and how to follow it.
     */
    static int after(RunnerCli.Call call, JsonNode action, WaitOptions waiting) {
        if (action == null || action.isNull() || action.isMissingNode() || call.out().json()) {
            return RunnerCli.Exit.DONE.code;
        }
        if (waiting.wait) {
            return follow(call, action, waiting);
        }
        if ("running".equals(action.path("status").asText())) {
            call.out().line(progress(action) + "; the rest goes on in the background: runner actions show "
                    + action.path("actionId").asText() + " --wait");
        }
        return RunnerCli.Exit.DONE.code;
    }

    private static int follow(RunnerCli.Call call, JsonNode first, WaitOptions waiting) {
        JsonNode action = first;
        String last = null;
        while (true) {
            String line = progress(action);
            if (!call.out().json() && !line.equals(last)) {
                call.out().line(line);
            }
            last = line;
            if (!"running".equals(action.path("status").asText())) {
                call.out().show(action, () -> { });
                return RunnerCli.Exit.DONE.code;
            }
            try {
                Thread.sleep(waiting.interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ApiClient.Unreachable("interrupted while waiting for an action", e);
            }
            action = RunnerCli.Call.accepted(call.api().get("/actions/" + segment(action.path("actionId").asText()), Map.of())).body();
        }
    }
}
