package dev.runner.cli;

import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.URI;
import java.util.concurrent.Callable;

/**
 * {@code bin/runner}: the management API (docs/management-api.md) from a terminal. Every command is
 * one or a few calls of the API; {@code --output json} prints the API's answers as they are, for scripts.
 */
@Command(name = "runner", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true, version = "runner 0.1.0",
        description = "Start, watch, cancel and redrive runs; list and redrive dead items; pause handlers; manage tenant keys.",
        subcommands = {RunsCommand.class, DeadCommand.class, HandlersCommand.class, TenantsCommand.class, KeysCommand.class,
                AutoComplete.GenerateCompletion.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:done (runs watch: the run completed)",
                "1:the API refused or failed the call (its error is printed)",
                "2:the command line is wrong",
                "3:runs watch: the run ended with dead items",
                "4:runs watch: the run was cancelled",
                "5:runs watch: the run failed (its fetch gave up)",
                "6:no answer from the endpoint"},
        footer = {"%nEnvironment: RUNNER_ENDPOINT, RUNNER_API_KEY. With --auth iam, the AWS SDK's default credentials and region."})
public final class RunnerCli {

    /** What the exit codes of the commands mean (listed in --help). */
    enum Exit {
        DONE(0), REFUSED(1), USAGE(2), RUN_HAS_DEAD_ITEMS(3), RUN_CANCELLED(4), RUN_FAILED(5), UNREACHABLE(6);

        final int code;

        Exit(int code) {
            this.code = code;
        }
    }

    /** How the CLI proves who it is: a bearer key, or SigV4 for a stack deployed with ManagementAuth=iam. */
    enum Auth { key, iam }

    @Option(names = "--endpoint", scope = ScopeType.INHERIT, paramLabel = "URL",
            defaultValue = "${env:RUNNER_ENDPOINT:-http://localhost:3000}",
            description = "The management API's base URL (env RUNNER_ENDPOINT; default ${DEFAULT-VALUE}).")
    URI endpoint;

    @Option(names = "--api-key", scope = ScopeType.INHERIT, paramLabel = "KEY", defaultValue = "${env:RUNNER_API_KEY}",
            description = "The admin key or a tenant key (env RUNNER_API_KEY).")
    String apiKey;

    @Option(names = "--auth", scope = ScopeType.INHERIT, defaultValue = "key", paramLabel = "key|iam",
            description = "key (a bearer API key) or iam (SigV4, for ManagementAuth=iam). Default: ${DEFAULT-VALUE}.")
    Auth auth;

    @Option(names = "--region", scope = ScopeType.INHERIT, paramLabel = "REGION",
            description = "With --auth iam: the region to sign for (default: the endpoint's, else the AWS SDK's default).")
    String region;

    @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, defaultValue = "text", paramLabel = "text|json",
            description = "text or json (the API's answers as they are). Default: ${DEFAULT-VALUE}.")
    Output.Format output;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** Runs one command line as {@code bin/runner} would, writing to {@code out} and {@code err}; returns its exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine line = commandLine();
        line.setOut(out);
        line.setErr(err);
        return line.execute(args);
    }

    /** The command line with its exit codes: an API error is 1, no answer 6, both told on stderr. */
    static CommandLine commandLine() {
        CommandLine line = new CommandLine(new RunnerCli());
        line.setExecutionExceptionHandler((e, command, parsed) -> {
            PrintWriter err = command.getErr();
            if (e instanceof Refused refused) {
                err.println("runner: " + refused.getMessage());
                return Exit.REFUSED.code;
            }
            if (e instanceof ApiClient.Unreachable unreachable) {
                err.println("runner: " + unreachable.getMessage());
                return Exit.UNREACHABLE.code;
            }
            throw e;
        });
        return line;
    }

    ApiClient client() {
        ApiClient.Credentials credentials = switch (auth) {
            case iam -> new ApiClient.Credentials.Iam(SigV4Signing.forEndpoint(endpoint, region));
            case key -> apiKey == null || apiKey.isBlank() ? new ApiClient.Credentials.None() : new ApiClient.Credentials.BearerKey(apiKey);
        };
        return new ApiClient(endpoint, credentials);
    }

    /** The API answered with an error: exit 1 with its message. */
    static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message);
        }
    }

    /** A command that calls the API: the root's connection options, the output, and a check of each answer. */
    abstract static class Call implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        private ApiClient client;

        RunnerCli root() {
            return (RunnerCli) spec.root().userObject();
        }

        ApiClient api() {
            if (client == null) {
                client = root().client();
            }
            return client;
        }

        Output out() {
            return new Output(root().output, spec.commandLine().getOut());
        }

        /** The answer if the API took the call, else {@link Refused} with what the API said. */
        static ApiClient.Answer accepted(ApiClient.Answer answer) {
            if (!answer.ok()) {
                throw new Refused(answer.problem());
            }
            return answer;
        }
    }
}
