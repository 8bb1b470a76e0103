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
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code bin/runner}: the management API (docs/management-api.md) from a terminal. Every command is
 * one or a few calls of the API; {@code --output json} prints the API's answers as they are, for scripts.
 */
@Command(name = "runner", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true, version = "runner 0.1.0",
        description = "Start, watch, cancel and redrive runs; list and redrive dead items; pause handlers; see why a tenant's items wait; manage tenant keys; follow bulk actions.",
        subcommands = {RunsCommand.class, DeadCommand.class, HandlersCommand.class, TenantsCommand.class, KeysCommand.class, ActionsCommand.class,
                AutoComplete.GenerateCompletion.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "0:done (runs watch: the run completed)",
                "1:the API refused or failed the call (its error is printed)",
                "2:the command line is wrong, or names an endpoint or key file the CLI refuses",
                "3:runs watch: the run ended with dead items",
                "4:runs watch: the run was cancelled",
                "5:runs watch: the run failed (its fetch gave up)",
                "6:no answer from the endpoint"},
        footer = {"%nEnvironment: RUNNER_ENDPOINT, RUNNER_API_KEY. With --auth iam, the AWS SDK's default credentials and region.",
                "Text output shows control characters of what the API answers escaped (\\x1b), never as they are."})
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
            description = "The management API's base URL (env RUNNER_ENDPOINT; default " + Connection.DEFAULT_ENDPOINT + "):"
                    + " https://, or http:// on this machine.")
    URI endpoint;

    @Option(names = "--allow-insecure-http", scope = ScopeType.INHERIT,
            description = "Allow http:// to a host other than this machine: the key travels in clear.")
    boolean allowInsecureHttp;

    @Option(names = "--api-key-file", scope = ScopeType.INHERIT, paramLabel = "FILE",
            description = "Read the admin key or a tenant key from FILE's first line (a file only you can read).")
    Path apiKeyFile;

    @Option(names = "--api-key", scope = ScopeType.INHERIT, paramLabel = "KEY",
            description = "The key itself, for scripts that cannot do otherwise: it shows in ps and the shell's history."
                    + " Without it: --api-key-file, else env RUNNER_API_KEY, else a prompt on a terminal.")
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

    /** The process's environment (a test's, in tests) and how a key is asked for. */
    private final Map<String, String> environment;
    private final Connection.KeyPrompt prompt;

    RunnerCli(Map<String, String> environment, Connection.KeyPrompt prompt) {
        this.environment = environment;
        this.prompt = prompt;
    }

    public static void main(String[] args) {
        System.exit(commandLine(System.getenv(), Connection.KeyPrompt.CONSOLE).execute(args));
    }

    /** Runs one command line as {@code bin/runner} would, writing to {@code out} and {@code err}; returns its exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        return run(out, err, System.getenv(), Connection.KeyPrompt.CONSOLE, args);
    }

    /** As above, with {@code environment} for the process's (RUNNER_ENDPOINT, RUNNER_API_KEY) and no prompt: for embedding. */
    public static int run(PrintWriter out, PrintWriter err, Map<String, String> environment, String... args) {
        return run(out, err, environment, text -> java.util.Optional.empty(), args);
    }

    /** As above, with the environment and the key prompt given. */
    static int run(PrintWriter out, PrintWriter err, Map<String, String> environment, Connection.KeyPrompt prompt, String... args) {
        CommandLine line = commandLine(environment, prompt);
        line.setOut(out);
        line.setErr(err);
        return line.execute(args);
    }

    /** The command line with its exit codes: an API error is 1, a refused endpoint or key file 2, no answer 6, each told on stderr. */
    static CommandLine commandLine(Map<String, String> environment, Connection.KeyPrompt prompt) {
        CommandLine line = new CommandLine(new RunnerCli(environment, prompt));
        line.setExecutionExceptionHandler((e, command, parsed) -> {
            PrintWriter err = command.getErr();
            if (e instanceof Refused refused) {
                err.println("runner: " + Output.safe(refused.getMessage()));
                return Exit.REFUSED.code;
            }
            if (e instanceof Connection.Refused refused) {
                err.println("runner: " + Output.safe(refused.getMessage()));
                return Exit.USAGE.code;
            }
            if (e instanceof ApiClient.Unreachable unreachable) {
                err.println("runner: " + Output.safe(unreachable.getMessage()));
                return Exit.UNREACHABLE.code;
            }
            throw e;
        });
        return line;
    }

    ApiClient client(PrintWriter err) {
        URI target = Connection.endpoint(endpoint, environment, allowInsecureHttp);
        ApiClient.Credentials credentials = switch (auth) {
            case iam -> new ApiClient.Credentials.Iam(SigV4Signing.forEndpoint(target, region));
            case key -> Connection.key(apiKey, apiKeyFile, environment, prompt, target, err)
                    .<ApiClient.Credentials>map(ApiClient.Credentials.BearerKey::new)
                    .orElseGet(ApiClient.Credentials.None::new);
        };
        return new ApiClient(target, credentials);
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
                client = root().client(spec.commandLine().getErr());
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
