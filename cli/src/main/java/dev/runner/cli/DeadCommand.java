package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;
import static dev.runner.cli.Output.Column.field;

/** {@code runner dead …}: GET /items?status=dead, and the redrives (one item, or every match). */
@Command(name = "dead", description = "List dead items and send them back to work.",
        subcommands = {DeadCommand.ListDead.class, DeadCommand.Redrive.class})
final class DeadCommand {

    /** The filters both subcommands take. */
    static final class Filters {
        @Option(names = "--tenant") String tenant;
        @Option(names = "--integration") String integration;
        @Option(names = "--handler") String handler;
        @Option(names = "--run", paramLabel = "RUN_ID") String run;
    }

    @Command(name = "list", description = "Dead items, newest dead first (GET /items?status=dead).")
    static final class ListDead extends RunnerCli.Call {
        @picocli.CommandLine.Mixin Filters filters;
        @picocli.CommandLine.Mixin Output.Paging paging;

        @Override
        public Integer call() {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("status", "dead");
            query.put("tenantId", filters.tenant);
            query.put("integrationKey", filters.integration);
            query.put("handlerKey", filters.handler);
            query.put("runId", filters.run);
            paging.into(query, "after");
            JsonNode body = accepted(api().get("/items", query)).body();
            out().table(body, body.path("items"), List.of(field("ITEM", "itemId"), field("RUN", "runId"), field("TENANT", "tenantId"),
                    new Output.Column("HANDLER", item -> item.path("integrationKey").asText() + "/" + item.path("handlerKey").asText()),
                    field("ATTEMPTS", "attempts"), field("DEAD AT", "dlqAt"), field("LAST ERROR", "lastError")), "no dead item matches");
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "redrive", description = "One dead item (ITEM_ID), or every dead item matching the filters (at least one), back to work.")
    static final class Redrive extends RunnerCli.Call {
        @Parameters(paramLabel = "ITEM_ID", arity = "0..1") String itemId;
        @picocli.CommandLine.Mixin Filters filters;
        @Option(names = "--limit", description = "At most this many (1..10000; default the API's, 1000).") Integer limit;
        @picocli.CommandLine.Mixin ActionsCommand.WaitOptions waiting;

        @Override
        public Integer call() {
            if (itemId != null) {
                JsonNode answer = accepted(api().post("/items/" + segment(itemId) + "/redrive", ApiClient.JSON.createObjectNode(), Map.of())).body();
                out().show(answer, () -> out().line(answer.path("redriven").asInt() == 1
                        ? "item " + itemId + " sent back to work" : "item " + itemId + " was not dead"));
                return RunnerCli.Exit.DONE.code;
            }
            ObjectNode body = ApiClient.JSON.createObjectNode();
            putIfGiven(body, "tenantId", filters.tenant);
            putIfGiven(body, "integrationKey", filters.integration);
            putIfGiven(body, "handlerKey", filters.handler);
            putIfGiven(body, "runId", filters.run);
            if (limit != null) {
                body.put("limit", limit);
            }
            JsonNode answer = accepted(api().post("/redrive", body, Map.of())).body();
            out().show(answer, () -> out().line(answer.path("redriven").asLong() + " dead items of " + answer.path("runs").asLong()
                    + " runs sent back to work; " + answer.path("remaining").asLong() + " remain"));
            return ActionsCommand.after(this, answer.path("action"), waiting);
        }

        private static void putIfGiven(ObjectNode body, String field, String value) {
            if (value != null) {
                body.put(field, value);
            }
        }
    }
}
