package dev.runner.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line itself: help for every command, the completion script, exit codes, SigV4 headers. A local HTTP server at most. */
class CommandLineTest {

    @ParameterizedTest
    @ValueSource(strings = {"", "runs", "runs start", "runs list", "runs show", "runs watch", "runs cancel", "runs redrive",
            "dead", "dead list", "dead redrive", "handlers", "handlers list", "handlers pause", "handlers resume",
            "keys", "keys create", "keys list", "keys revoke", "actions", "actions show", "actions list"})
    void everyCommandHasHelp(String command) {
        StringWriter out = new StringWriter();
        String[] args = (command.isEmpty() ? "--help" : command + " --help").split(" ");
        assertEquals(0, RunnerCli.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), args));
        assertTrue(out.toString().startsWith("Usage: runner" + (command.isEmpty() ? "" : " " + command)), out.toString());
        assertTrue(out.toString().contains("--endpoint=URL"), "the connection options on every command: " + out);
        assertTrue(out.toString().contains("Exit codes:"), out.toString());
    }

    @Test
    void generatesABashAndZshCompletionScript() {
        StringWriter out = new StringWriter();
        assertEquals(0, RunnerCli.run(new PrintWriter(out, true), new PrintWriter(new StringWriter(), true), "generate-completion"));
        assertTrue(out.toString().contains("complete -F _complete_runner"), out.toString().lines().limit(5).toList().toString());
        assertTrue(out.toString().contains("watch"), "subcommands are completed");
    }

    @Test
    void aWrongCommandLineIsExitTwoAndNoAnswerIsExitSix() {
        StringWriter err = new StringWriter();
        assertEquals(2, RunnerCli.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), "runs", "start"));
        assertTrue(err.toString().contains("Missing required options"), err.toString());
        StringWriter unreachable = new StringWriter();
        assertEquals(6, RunnerCli.run(new PrintWriter(new StringWriter(), true), new PrintWriter(unreachable, true),
                "--endpoint", "http://127.0.0.1:9", "runs", "list"));
        assertTrue(unreachable.toString().startsWith("runner: no answer from http://127.0.0.1:9"), unreachable.toString());
    }

    @Test
    void anErrorAnswerIsExitOneWithTheApisMessage() throws Exception {
        HttpServer server = server(404, "{\"error\":\"not_found\",\"message\":\"no run 42\"}", new AtomicReference<>());
        try {
            StringWriter err = new StringWriter();
            assertEquals(1, RunnerCli.run(new PrintWriter(new StringWriter(), true), new PrintWriter(err, true),
                    Map.of("RUNNER_API_KEY", "k"), NO_TERMINAL, "--endpoint", url(server), "runs", "show", "42"));
            assertEquals("runner: 404 not_found: no run 42", err.toString().strip());
        } finally {
            server.stop(0);
        }
    }

    /** With --auth iam the SDK's signer signs for execute-api in the endpoint's region; no bearer key is sent. */
    @Test
    void iamSignsWithSigV4ForExecuteApi() throws Exception {
        AtomicReference<Map<String, String>> seen = new AtomicReference<>();
        HttpServer server = server(200, "{\"runs\":[],\"next\":null}", seen);
        try {
            var signing = new SigV4Signing(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDEXAMPLE", "secret-example")),
                    "eu-west-1");
            var api = new ApiClient(URI.create(url(server)), new ApiClient.Credentials.Iam(signing));
            assertTrue(api.get("/runs", Map.of("limit", "5")).ok());
            String authorization = seen.get().get("authorization");
            assertTrue(authorization.matches("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\\d{8}/eu-west-1/execute-api/aws4_request, "
                    + "SignedHeaders=[a-z0-9;-]*host[a-z0-9;-]*, Signature=[0-9a-f]{64}"), authorization);
            assertTrue(seen.get().containsKey("x-amz-date"), seen.get().toString());
        } finally {
            server.stop(0);
        }
        assertEquals("us-east-2", SigV4Signing.regionOf(URI.create("https://abc123.execute-api.us-east-2.amazonaws.com")));
        assertNull(SigV4Signing.regionOf(URI.create("http://localhost:3000")));
    }

    /** The key comes from a file, the environment or a prompt, in that order; --api-key still works, with a warning. */
    @Test
    void theKeyComesFromAFileTheEnvironmentOrAPromptAndTheFlagIsWarnedAbout(@TempDir Path directory) throws Exception {
        AtomicReference<Map<String, String>> seen = new AtomicReference<>();
        HttpServer server = server(200, "{\"runs\":[],\"next\":null}", seen);
        try {
            Path file = Files.writeString(directory.resolve("key"), "from-file\n");
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
            Map<String, String> environment = Map.of("RUNNER_API_KEY", "from-environment");
            Connection.KeyPrompt prompt = text -> Optional.of("typed-at-the-prompt");

            Ran fromFile = run(environment, prompt, "--endpoint", url(server), "--api-key-file", file.toString(), "runs", "list");
            assertEquals("Bearer from-file", seen.get().get("authorization"));
            assertEquals("", fromFile.err());
            Ran fromEnvironment = run(environment, prompt, "--endpoint", url(server), "runs", "list");
            assertEquals("Bearer from-environment", seen.get().get("authorization"));
            assertEquals("", fromEnvironment.err());
            run(Map.of(), prompt, "--endpoint", url(server), "runs", "list");
            assertEquals("Bearer typed-at-the-prompt", seen.get().get("authorization"));
            run(Map.of(), NO_TERMINAL, "--endpoint", url(server), "runs", "list");
            assertNull(seen.get().get("authorization"), "no terminal to ask at: no key, and the API answers for itself");

            Ran flag = run(environment, prompt, "--endpoint", url(server), "--api-key", "on-the-command-line", "runs", "list");
            assertEquals(0, flag.exit());
            assertEquals("Bearer on-the-command-line", seen.get().get("authorization"));
            assertTrue(flag.err().startsWith("runner: warning: --api-key shows the key"), flag.err());

            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            Ran readable = run(environment, prompt, "--endpoint", url(server), "--api-key-file", file.toString(), "runs", "list");
            assertTrue(readable.err().contains("may be read by other users; chmod 600 it"), readable.err());
            Ran missing = run(environment, prompt, "--endpoint", url(server), "--api-key-file", directory.resolve("none").toString(),
                    "runs", "list");
            assertEquals(2, missing.exit(), missing.err());
        } finally {
            server.stop(0);
        }
    }

    /** Plain http carries the bearer key in clear: only to this machine, unless the operator says the network is theirs. */
    @Test
    void plainHttpIsRefusedForAnyHostButThisMachineUnlessAllowed() {
        for (String endpoint : new String[] {"http://runner.example.com", "http://10.0.0.7:3000", "http://[fd00::1]:3000", "ftp://runner.example.com"}) {
            Ran refused = run(Map.of("RUNNER_API_KEY", "k"), NO_TERMINAL, "--endpoint", endpoint, "runs", "list");
            assertEquals(2, refused.exit(), endpoint + ": " + refused.err());
            assertTrue(refused.err().startsWith("runner: "), refused.err());
        }
        Ran fromEnvironment = run(Map.of("RUNNER_ENDPOINT", "http://runner.example.com"), NO_TERMINAL, "runs", "list");
        assertEquals(2, fromEnvironment.exit(), "RUNNER_ENDPOINT is held to the same rule");
        assertTrue(fromEnvironment.err().contains("use https://, or --allow-insecure-http"), fromEnvironment.err());
        // Allowed, the call goes out (and finds nobody at a name that cannot resolve).
        assertEquals(6, run(Map.of(), NO_TERMINAL, "--allow-insecure-http", "--endpoint", "http://runner.invalid", "runs", "list").exit());
        for (String host : new String[] {"localhost", "127.0.0.1", "127.3.4.5", "[::1]"}) {
            assertTrue(Connection.onThisMachine(host), host);
        }
        for (String host : new String[] {"localhost.example.com", "10.0.0.1", "[fd00::1]", "127.0.0.1.nip.io"}) {
            assertFalse(Connection.onThisMachine(host), host);
        }
    }

    /** What the API answers is untrusted: its control characters never reach the terminal as they are, in text or JSON. */
    @Test
    void controlCharactersInAnswersAreShownEscaped() throws Exception {
        String hostile = "{\"runId\":\"r-1\",\"status\":\"running\\u001b[2J\",\"tenantId\":\"t\\u009b31m\","
                + "\"integrationKey\":\"i\",\"handlerKey\":\"h\",\"trigger\":\"manual\",\"error\":\"boom\\u001b]0;owned\\u0007\\u202e\","
                + "\"counts\":{\"total\":1},\"createdAt\":\"2026-01-01T00:00:00Z\",\"finishedAt\":null}";
        HttpServer server = server(200, hostile, new AtomicReference<>());
        try {
            Ran text = run(Map.of("RUNNER_API_KEY", "k"), NO_TERMINAL, "--endpoint", url(server), "runs", "show", "r-1");
            assertEquals(0, text.exit(), text.err());
            assertTrue(text.out().codePoints().noneMatch(c -> c == 0x1b || c == 0x07 || c == 0x9b || c == 0x202e), text.out());
            assertTrue(text.out().contains("running\\x1b[2J"), text.out());
            assertTrue(text.out().contains("boom\\x1b]0;owned\\x07\\u202e"), text.out());
            assertTrue(text.out().contains("t\\x9b31m"), text.out());
            Ran json = run(Map.of("RUNNER_API_KEY", "k"), NO_TERMINAL, "--endpoint", url(server), "--output", "json", "runs", "show", "r-1");
            assertTrue(json.out().codePoints().noneMatch(c -> c == 0x1b || c == 0x07 || c == 0x9b || c == 0x202e), json.out());
            assertEquals("boom\u001b]0;owned\u0007\u202e", ApiClient.JSON.readTree(json.out()).path("error").asText(), "the same text, escaped");
        } finally {
            server.stop(0);
        }
    }

    private static final Connection.KeyPrompt NO_TERMINAL = text -> Optional.empty();

    /** What one command line printed and how it exited. */
    record Ran(int exit, String out, String err) {}

    private static Ran run(Map<String, String> environment, Connection.KeyPrompt prompt, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = RunnerCli.run(new PrintWriter(out, true), new PrintWriter(err, true), environment, prompt, args);
        return new Ran(exit, out.toString(), err.toString());
    }

    private static HttpServer server(int status, String body, AtomicReference<Map<String, String>> headers) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 4);
        server.createContext("/", exchange -> {
            Map<String, String> seen = new java.util.HashMap<>();
            exchange.getRequestHeaders().forEach((name, values) -> seen.put(name.toLowerCase(java.util.Locale.ROOT), String.join(",", values)));
            headers.set(seen);
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("content-type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        return server;
    }

    private static String url(HttpServer server) {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }
}
