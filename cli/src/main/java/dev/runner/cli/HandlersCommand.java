package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;
import static dev.runner.cli.Output.Column.field;

/** {@code runner handlers …}: GET /handlers, and pause or resume one (admin). */
@Command(name = "handlers", description = "List handlers with their pause, breaker and limits; pause and resume them.",
        subcommands = {HandlersCommand.ListHandlers.class, HandlersCommand.Pause.class, HandlersCommand.Resume.class})
final class HandlersCommand {

    @Command(name = "list", description = "Every handler (GET /handlers).")
    static final class ListHandlers extends RunnerCli.Call {
        @Override
        public Integer call() {
            JsonNode body = accepted(api().get("/handlers", Map.of())).body();
            out().table(body, body.path("handlers"), List.of(field("INTEGRATION", "integrationKey"), field("HANDLER", "handlerKey"),
                    new Output.Column("PAUSED", handler -> handler.path("paused").asBoolean() ? "paused" : "running"),
                    field("PARKED", "parked"),
                    new Output.Column("BREAKER", handler -> Output.text(handler.path("breaker").path("state"))),
                    new Output.Column("IN FLIGHT", handler -> Output.text(handler.path("concurrency").path("inUse")) + "/"
                            + Output.text(handler.path("concurrency").path("limit"))),
                    new Output.Column("LAST MINUTE", handler -> Output.text(handler.path("rate").path("usedLastMinute")) + "/"
                            + Output.text(handler.path("rate").path("limitPerMinute"))),
                    new Output.Column("LEARNT", HandlersCommand::learnt)), "no handler");
            return RunnerCli.Exit.DONE.code;
        }
    }

    /** The handler's adaptive scope in a few words: its learnt concurrency, a stop, the tenants cut. */
    static String learnt(JsonNode handler) {
        JsonNode adaptive = handler.path("adaptive");
        if (adaptive.isMissingNode() || adaptive.isNull()) {
            return "-";
        }
        JsonNode own = adaptive.path("handler");
        StringBuilder text = new StringBuilder();
        if (own.isObject()) {
            text.append(own.path("stoppedUntil").isTextual() ? "stopped " : "")
                    .append(own.path("concurrency").isNumber() ? "c=" + own.path("concurrency").asText() : "");
        }
        int tenants = adaptive.path("tenants").size();
        if (tenants > 0) {
            text.append(text.isEmpty() ? "" : ", ").append(tenants).append(tenants == 1 ? " tenant" : " tenants");
        }
        return text.isEmpty() ? "as configured" : text.toString().strip();
    }

    /** The handler both subcommands name. */
    abstract static class OneHandler extends RunnerCli.Call {
        @Parameters(index = "0", paramLabel = "INTEGRATION") String integration;
        @Parameters(index = "1", paramLabel = "HANDLER") String handler;

        JsonNode act(String verb) {
            return accepted(api().post("/handlers/" + segment(integration) + "/" + segment(handler) + "/" + verb,
                    ApiClient.JSON.createObjectNode(), Map.of())).body();
        }
    }

    @Command(name = "pause", description = "Pause a handler for every tenant: its items wait parked, unattempted.")
    static final class Pause extends OneHandler {
        @Override
        public Integer call() {
            JsonNode answer = act("pause");
            out().show(answer, () -> out().line(integration + "/" + handler + " paused"));
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "resume", description = "Resume a handler: its parked items go back to work, a page at a time (--wait follows it).")
    static final class Resume extends OneHandler {
        @picocli.CommandLine.Mixin ActionsCommand.WaitOptions waiting;

        @Override
        public Integer call() {
            JsonNode answer = act("resume");
            out().show(answer, () -> out().line(integration + "/" + handler + " resumed; "
                    + answer.path("resumed").asLong() + " parked items sent back to work"));
            return ActionsCommand.after(this, answer.path("action"), waiting);
        }
    }
}
