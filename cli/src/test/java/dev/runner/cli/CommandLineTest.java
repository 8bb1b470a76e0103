package dev.runner.cli;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line itself: help for every command, the completion script, exit codes, SigV4 headers. A local HTTP server at most. */
class CommandLineTest {

    @ParameterizedTest
    @ValueSource(strings = {"", "runs", "runs start", "runs list", "runs show", "runs watch", "runs cancel", "runs redrive",
            "dead", "dead list", "dead redrive", "handlers", "handlers list", "handlers pause", "handlers resume",
            "keys", "keys create", "keys list", "keys revoke"})
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
                    "--endpoint", url(server), "--api-key", "k", "runs", "show", "42"));
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
