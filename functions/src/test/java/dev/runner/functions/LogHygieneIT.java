package dev.runner.functions;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.functions.telemetry.LogLevels;
import dev.runner.json.Json;
import dev.runner.run.RunStatus;
import dev.runner.testing.FakeHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What reaches stdout while the functions work (every log line and EMF record goes there, in
 * Lambda to CloudWatch Logs): one JSON object per line, and never a secret or a payload, with every
 * library logging at debug. Real webhooks, item batches, handler rejections and a forged signature
 * through real Postgres, Redis and SQS; stdout captured as Lambda would.
 */
class LogHygieneIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of("RUNNER_MAX_ATTEMPTS", "1"));

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private PrintStream original;
    private String levels;

    @BeforeEach
    void captureStdoutAtDebug() {
        original = System.out;
        levels = LogLevels.current();
        System.setOut(new PrintStream(new Tee(original, captured), true, StandardCharsets.UTF_8));
        LogLevels.apply("debug");
    }

    @AfterEach
    void restore() {
        LogLevels.apply(levels);
        System.setOut(original);
    }

    @Test
    void noSecretOrPayloadReachesALogLine() {
        var integration = fixture.integration(true);
        String marker = "payload-marker-" + UUID.randomUUID();
        // The handler verifies with a key of its own, created through the API as an admin would.
        var created = fixture.api("POST", "/handlers/" + integration.integrationKey() + "/" + integration.handlerKey() + "/signing-keys",
                Json.object().put("overlapSeconds", 0));
        assertEquals(201, created.status(), created.body());
        String handlerKey = Json.parse(created.body()).path("secret").asText();
        fixture.handlers.handler(integration.handlerKey()).signingSecrets(handlerKey).refuseBadSignatures()
                .itemStatus(item -> item.toString().contains("reject") ? 422 : 200);
        String body = "[{\"externalId\":\"h-1\",\"note\":\"" + marker + "\"},{\"externalId\":\"h-2\",\"note\":\"" + marker + " reject\"}]";

        var accepted = fixture.webhook(fixture.webhookEvent(integration, body));
        assertEquals(202, accepted.getStatusCode(), accepted.getBody());
        UUID runId = UUID.fromString(Json.parse(accepted.getBody()).path("runId").asText());
        var forged = fixture.webhookEvent(new PipelineFixture.Integration(integration.tenantId(), integration.integrationKey(),
                integration.handlerKey(), "not-the-secret-" + marker), body);
        assertEquals(401, fixture.webhook(forged).getStatusCode());
        fixture.awaitRun(runId, RunStatus.COMPLETED_WITH_ERRORS, Duration.ofSeconds(30));
        assertTrue(fixture.handlers.itemCalls(integration.handlerKey()).stream().allMatch(FakeHandler.Call::signatureValid),
                "every call verified with the handler's own key");
        // The dead item's DLQ invocation has ended, with its lines.
        await().atMost(Duration.ofSeconds(10)).until(() -> output().contains("\"function_name\":\"dlq\""));

        String output = output();
        Map<String, String> secrets = Map.of("payload", marker, "webhook secret", integration.webhookSecret(),
                "handler signing secret", fixture.stack.environment().get("RUNNER_HANDLER_SIGNING_SECRET"),
                "handler's own signing key", handlerKey, "handler's own signing key's base64", handlerKey.substring("whsec_".length()),
                "API key", fixture.apiKey);
        secrets.forEach((what, secret) -> assertFalse(output.contains(secret), "the " + what + " is in a log line"));
        assertTrue(output.contains("\"level\":\"DEBUG\""), "libraries logged at debug: the check saw their lines");
        List<String> lines = output.lines().filter(line -> !line.isBlank()).toList();
        for (String line : lines) {
            JsonNode json = Json.parse(line);
            assertTrue(json.has("level") || json.has("_aws"), "a log line or an EMF record: " + line);
        }
        assertTrue(lines.stream().map(Json::parse).anyMatch(json -> json.path("function_name").asText().equals("items")
                && json.path("function_request_id").isTextual() && json.path("cold_start").isBoolean()), "invocation context on the lines");
    }

    private String output() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    /** Writes to the original stdout and to the capture. */
    private static final class Tee extends OutputStream {
        private final OutputStream original;
        private final ByteArrayOutputStream capture;

        Tee(OutputStream original, ByteArrayOutputStream capture) {
            this.original = original;
            this.capture = capture;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            synchronized (capture) {
                capture.write(bytes, offset, length);
            }
            try {
                original.write(bytes, offset, length);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }
}
