package dev.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static dev.runner.cli.ApiClient.segment;
import static dev.runner.cli.Output.Column.field;

/** {@code runner keys …}: tenant keys (POST /keys, GET /keys, DELETE /keys/{keyId}; admin). */
@Command(name = "keys", description = "Create, list and revoke tenant keys.",
        subcommands = {KeysCommand.Create.class, KeysCommand.ListKeys.class, KeysCommand.Revoke.class})
final class KeysCommand {

    static final List<Output.Column> KEY_COLUMNS = List.of(field("KEY ID", "keyId"), field("TENANT", "tenantId"), field("NAME", "name"),
            field("CREATED", "createdAt"), field("REVOKED", "revokedAt"));

    @Command(name = "create", description = "A new key for one tenant; the key is shown this once.")
    static final class Create extends RunnerCli.Call {
        @Option(names = "--tenant", required = true) String tenant;
        @Option(names = "--name", required = true, description = "What the key is for (at most 200 characters).") String name;

        @Override
        public Integer call() {
            JsonNode key = accepted(api().post("/keys", ApiClient.JSON.createObjectNode().put("tenantId", tenant).put("name", name), Map.of())).body();
            out().show(key, () -> {
                out().printFacts(key, "key id", "keyId", "tenant", "tenantId", "name", "name");
                out().fact("key", key.path("key").asText() + "  (shown this once: keep it now)");
            });
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "list", description = "Keys, newest first, revoked ones too; never a key itself.")
    static final class ListKeys extends RunnerCli.Call {
        @Option(names = "--tenant") String tenant;
        @picocli.CommandLine.Mixin Output.Paging paging;

        @Override
        public Integer call() {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("tenantId", tenant);
            paging.into(query, "before");
            JsonNode body = accepted(api().get("/keys", query)).body();
            out().table(body, body.path("keys"), KEY_COLUMNS, "no key");
            return RunnerCli.Exit.DONE.code;
        }
    }

    @Command(name = "revoke", description = "Revoke a key: its next request is refused.")
    static final class Revoke extends RunnerCli.Call {
        @Parameters(paramLabel = "KEY_ID") String keyId;

        @Override
        public Integer call() {
            JsonNode key = accepted(api().delete("/keys/" + segment(keyId))).body();
            out().show(key, () -> out().line("key " + keyId + " revoked at " + key.path("revokedAt").asText()));
            return RunnerCli.Exit.DONE.code;
        }
    }
}
