package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;

/** {@code runner tenants show TENANT}: GET /tenants/{tenantId}, why a tenant's items wait. */
@Command(name = "tenants", description = "Why a tenant's items wait: its window and, per handler, the reasons with counts.",
        subcommands = {TenantsCommand.Show.class})
final class TenantsCommand {

    @Command(name = "show", description = "A tenant's window and why its items wait, per handler (GET /tenants/{tenantId}).")
    static final class Show extends RunnerCli.Call {
        @Parameters(index = "0", paramLabel = "TENANT") String tenantId;

        @Override
        public Integer call() {
            JsonNode body = accepted(api().get("/tenants/" + segment(tenantId), Map.of())).body();
            out().show(body, () -> print(out().writer(), body));
            return RunnerCli.Exit.DONE.code;
        }

        private static void print(PrintWriter out, JsonNode body) {
            JsonNode window = body.path("window");
            out.println("tenant " + Output.text(body.path("tenantId")) + ": window " + Output.text(window.path("usedLastMinute")) + "/"
                    + Output.text(window.path("limitPerMinute")) + " this minute, " + Output.text(window.path("reservedAhead"))
                    + " slots reserved ahead, " + Output.text(window.path("heldPastHorizon")) + " held past the horizon"
                    + ("unavailable".equals(body.path("redis").asText()) ? " (Redis did not answer: only Postgres' counts)" : ""));
            if (body.path("handlers").isEmpty()) {
                out.println("none of its items wait");
            }
            for (JsonNode handler : body.path("handlers")) {
                JsonNode items = handler.path("items");
                out.println(Output.text(handler.path("integrationKey")) + "/" + Output.text(handler.path("handlerKey")) + ": "
                        + items.path("waiting").asLong() + " waiting, " + items.path("held").asLong() + " held, "
                        + items.path("parked").asLong() + " parked, " + items.path("retrying").asLong() + " retrying, "
                        + items.path("processing").asLong() + " in flight, " + items.path("pending").asLong() + " pending");
                for (JsonNode reason : handler.path("waitingFor")) {
                    out.println("  " + Output.text(reason.path("reason")) + (reason.path("now").asBoolean() ? " (now)" : " (lately)") + ": "
                            + reason.path("items").asLong() + " items"
                            + (reason.path("detail").isTextual() ? ": " + reason.path("detail").asText() : ""));
                }
            }
        }
    }
}
