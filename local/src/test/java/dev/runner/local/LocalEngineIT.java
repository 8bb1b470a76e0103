package dev.runner.local;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.local.testfunctions.Recorder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine against a fixture template with test functions, on real embedded servers: proves
 * the wiring (routes, pollers, schedules, environment) independently of Runner's own functions.
 */
class LocalEngineIT {

    private static LocalRuntime runtime;
    private static SqsClient sqs;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws URISyntaxException {
        Map<String, String> environment = Map.of(
                "RUNNER_SCHEDULE_TICK_MS", "300",
                "RUNNER_CUSTOM", "from-caller",
                "RUNNER_MAX_ATTEMPTS", "9",
                "UNRELATED", "not-passed");
        runtime = LocalRuntime.start(LocalOptions.defaults(fixture(), environment).withFreePorts().withDemo(false));
        sqs = SqsClient.builder()
                .endpointOverride(URI.create(runtime.endpoints().sqsEndpoint()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "x")))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
    }

    @AfterAll
    static void stop() {
        sqs.close();
        runtime.close();
    }

    @Test
    void printsAReadyLineWithAUsableJdbcUrl() throws Exception {
        String ready = runtime.readyLine();
        assertTrue(ready.matches("READY api=http://127\\.0\\.0\\.1:\\d+ sqs=http://127\\.0\\.0\\.1:\\d+ "
                + "redis=redis://127\\.0\\.0\\.1:\\d+ postgres=jdbc:postgresql://127\\.0\\.0\\.1:\\d+/postgres\\?sslmode=verify-full&sslrootcert=\\S+&user=postgres&password=postgres"
                + " secretsmanager=http://127\\.0\\.0\\.1:\\d+ metrics=\\S+\\.emf\\.jsonl"), ready);
        String jdbc = ready.substring(ready.indexOf("postgres=") + "postgres=".length(), ready.indexOf(" secretsmanager="));
        try (var connection = DriverManager.getConnection(jdbc);
             var result = connection.createStatement().executeQuery("select count(*) from flyway_schema_history where success")) {
            assertTrue(result.next());
            assertTrue(result.getInt(1) >= 1, "migrations ran");
        }
    }

    @Test
    void anHttpRouteGetsAPayloadFormat2Event() throws Exception {
        String body = "{\"n\":" + System.nanoTime() + "}";
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/things/t%201?x=1&x=2&y="))
                .header("Content-Type", "application/json")
                .header("X-Custom-Header", "v")
                .header("Cookie", "a=1; b=2")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());

        assertEquals(201, response.statusCode());
        assertEquals(body, response.body());
        assertEquals("POST /things/{thingId}", response.headers().firstValue("X-Route").orElseThrow());
        Recorder.Invocation invocation = Recorder.of("runner-EchoFunction").stream()
                .filter(i -> body.equals(((APIGatewayV2HTTPEvent) i.event()).getBody())).findFirst().orElseThrow();
        var event = (APIGatewayV2HTTPEvent) invocation.event();
        assertEquals("2.0", event.getVersion());
        assertEquals("POST /things/{thingId}", event.getRouteKey());
        assertEquals("/things/t%201", event.getRawPath());
        assertEquals("x=1&x=2&y=", event.getRawQueryString());
        assertEquals(Map.of("x", "1,2", "y", ""), event.getQueryStringParameters());
        assertEquals(Map.of("thingId", "t 1"), event.getPathParameters());
        assertEquals("v", event.getHeaders().get("x-custom-header"));
        assertEquals("application/json", event.getHeaders().get("content-type"));
        assertEquals(List.of("a=1", "b=2"), event.getCookies());
        assertFalse(event.getIsBase64Encoded());
        assertEquals("POST", event.getRequestContext().getHttp().getMethod());
        assertEquals("127.0.0.1", event.getRequestContext().getHttp().getSourceIp());
        assertEquals("$default", event.getRequestContext().getStage());
        assertTrue(event.getRequestContext().getTimeEpoch() > 0);
        assertTrue(invocation.remainingMillis() > 0 && invocation.remainingMillis() <= 5000, "follows Timeout: 5");
    }

    @Test
    void functionsGetTheTemplateEnvironmentThenCallerRunnerVariablesThenLocalEndpoints() {
        waitForTicks(1);
        Map<String, String> environment = Recorder.of("runner-TickFunction").getFirst().environment();

        assertEquals("9", environment.get("RUNNER_MAX_ATTEMPTS"), "the caller's RUNNER_* beats the template");
        assertEquals("from-caller", environment.get("RUNNER_CUSTOM"));
        assertFalse(environment.containsKey("UNRELATED"));
        assertEquals(runtime.apiKey(), environment.get("RUNNER_API_KEY"), "a {{resolve:secretsmanager}} reference gets a local value");
        assertEquals(runtime.queueUrls().get("WorkQueue"), environment.get("RUNNER_QUEUE_WORK"));
        assertEquals(runtime.endpoints().jdbcUrl(), environment.get("RUNNER_DATABASE_URL"));
        assertEquals(runtime.endpoints().redisUrl(), environment.get("RUNNER_REDIS_URL"));
        assertEquals(runtime.endpoints().sqsEndpoint(), environment.get("RUNNER_SQS_ENDPOINT"));
        assertEquals("us-east-1", environment.get("AWS_REGION"));
        assertFalse(environment.containsKey("RUNNER_HANDLER_SIGNING_SECRET"), "secrets are read at run time, not given");
        assertFalse(environment.containsKey("RUNNER_DATABASE_PASSWORD"), "secrets are read at run time, not given");
        assertEquals(runtime.secretsEndpoint().toString(), environment.get("RUNNER_SECRETS_ENDPOINT"));
        assertEquals("runner-TickFunction", environment.get("AWS_ACCESS_KEY_ID"), "each function signs as itself");
        assertEquals("127.0.0.0/8,::1/128", environment.get("RUNNER_HANDLER_ALLOWED_NETWORKS"), "handlers on this machine, nowhere else inside");
    }

    @Test
    void binaryBodiesTravelAsBase64() throws Exception {
        byte[] bytes = {0, (byte) 0xff, 1, 2};
        HttpResponse<byte[]> response = HTTP.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/files/a/b.bin"))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes)).build(), HttpResponse.BodyHandlers.ofByteArray());

        assertEquals(201, response.statusCode());
        assertEquals(Base64.getEncoder().encodeToString(bytes), Base64.getEncoder().encodeToString(response.body()));
        var event = (APIGatewayV2HTTPEvent) Recorder.of("runner-EchoFunction").stream()
                .filter(i -> ((APIGatewayV2HTTPEvent) i.event()).getRawPath().equals("/files/a/b.bin")).findFirst().orElseThrow().event();
        assertTrue(event.getIsBase64Encoded());
        assertEquals(Map.of("proxy", "a/b.bin"), event.getPathParameters());
        assertEquals("ANY /files/{proxy+}", event.getRouteKey());
    }

    @Test
    void anUnknownRouteIsAJson404AndAFailingFunctionA500() throws Exception {
        HttpResponse<String> missing = HTTP.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/nowhere")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, missing.statusCode());
        assertEquals("{\"error\":\"not_found\",\"message\":\"no route for GET /nowhere\"}", missing.body());

        HttpResponse<String> failing = HTTP.send(HttpRequest.newBuilder(runtime.apiUrl().resolve("/things/x"))
                .POST(HttpRequest.BodyPublishers.ofString("boom")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(500, failing.statusCode());
        assertTrue(failing.body().contains("\"error\""), failing.body());
    }

    @Test
    void deletesWhatSucceededAndLetsReportedFailuresRedriveToTheDeadLetterQueue() {
        String run = UUID.randomUUID().toString();
        String queue = runtime.queueUrls().get("WorkQueue");
        sqs.sendMessage(b -> b.queueUrl(queue).messageBody("ok-" + run).messageGroupId("tenant-a")
                .messageAttributes(Map.of("trace", MessageAttributeValue.builder().dataType("String").stringValue(run).build())));
        sqs.sendMessage(b -> b.queueUrl(queue).messageBody("fail").messageAttributes(
                Map.of("trace", MessageAttributeValue.builder().dataType("String").stringValue(run).build())));

        await().atMost(Duration.ofSeconds(60)).until(() -> received("runner-DlqFunction", run).size() == 1);
        List<SQSEvent.SQSMessage> work = received("runner-WorkFunction", run);
        SQSEvent.SQSMessage ok = work.stream().filter(m -> m.getBody().equals("ok-" + run)).findFirst().orElseThrow();
        assertEquals(1, work.stream().filter(m -> m.getBody().equals("ok-" + run)).count(), "a success is deleted, never redelivered");
        assertEquals(2, work.stream().filter(m -> m.getBody().equals("fail")).count(), "maxReceiveCount 2, then the DLQ");
        assertEquals("aws:sqs", ok.getEventSource());
        assertEquals("arn:aws:sqs:us-east-1:000000000000:runner-work", ok.getEventSourceArn());
        assertEquals("1", ok.getAttributes().get("ApproximateReceiveCount"));
        assertEquals("tenant-a", ok.getAttributes().get("MessageGroupId"));
        assertNotNull(ok.getAttributes().get("SentTimestamp"));
        assertNotNull(ok.getReceiptHandle());
        assertEquals("String", ok.getMessageAttributes().get("trace").getDataType());
        SQSEvent.SQSMessage dead = received("runner-DlqFunction", run).getFirst();
        assertEquals("arn:aws:sqs:us-east-1:000000000000:runner-work-dlq", dead.getEventSourceArn());
    }

    @Test
    void aThrowingFunctionGetsTheWholeBatchAgain() {
        String run = UUID.randomUUID().toString();
        String queue = runtime.queueUrls().get("WorkQueue");
        sqs.sendMessage(b -> b.queueUrl(queue).messageBody("throw").messageAttributes(
                Map.of("trace", MessageAttributeValue.builder().dataType("String").stringValue(run).build())));

        await().atMost(Duration.ofSeconds(60)).until(() -> received("runner-DlqFunction", run).size() == 1);
        assertEquals(2, received("runner-WorkFunction", run).size(), "received, thrown, redelivered, thrown, dead-lettered");
    }

    @Test
    void aReportNamingAMessageNotInTheBatchFailsTheWholeBatch() {
        String run = UUID.randomUUID().toString();
        String queue = runtime.queueUrls().get("WorkQueue");
        sqs.sendMessage(b -> b.queueUrl(queue).messageBody("bogus").messageAttributes(
                Map.of("trace", MessageAttributeValue.builder().dataType("String").stringValue(run).build())));

        await().atMost(Duration.ofSeconds(60)).until(() -> received("runner-DlqFunction", run).size() == 1);
        assertEquals(2, received("runner-WorkFunction", run).size(), "as Lambda does: nothing deleted, redelivered, dead-lettered");
    }

    @Test
    void batchesUpToBatchSizeWithinTheBatchingWindow() {
        String run = UUID.randomUUID().toString();
        String queue = runtime.queueUrls().get("WorkQueue");
        for (int i = 0; i < 5; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(queue).messageBody("batch-" + n).messageAttributes(
                    Map.of("trace", MessageAttributeValue.builder().dataType("String").stringValue(run).build())));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> received("runner-WorkFunction", run).size() == 5);
        long batches = Recorder.of("runner-WorkFunction").stream()
                .filter(i -> ((SQSEvent) i.event()).getRecords().stream().anyMatch(m -> traced(m, run))).count();
        assertTrue(batches <= 3, "5 messages in one-second windows with 2 pollers: at most a few batches, got " + batches);
        Recorder.of("runner-WorkFunction").forEach(i -> assertTrue(((SQSEvent) i.event()).getRecords().size() <= 5));
    }

    @Test
    void schedulesFireScheduledEvents() {
        waitForTicks(2);
        var event = (ScheduledEvent) Recorder.of("runner-TickFunction").getFirst().event();
        assertEquals("Scheduled Event", event.getDetailType());
        assertEquals("aws.events", event.getSource());
        assertNotNull(event.getTime());
        assertEquals(1, event.getResources().size());
    }

    @Test
    void aTakenPortIsAOneLineErrorWithExitCode2() throws Exception {
        try (var taken = new ServerSocket(0)) {
            var builder = new ProcessBuilder(javaCommand(fixture().toString()));
            builder.environment().put("RUNNER_API_PORT", Integer.toString(taken.getLocalPort()));
            Process process = builder.start();
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            String stderr = new String(process.getErrorStream().readAllBytes()).strip();
            assertEquals(2, process.exitValue(), stderr);
            assertEquals(new EmbeddedServers.PortTakenException("api", taken.getLocalPort()).getMessage(), stderr);
            assertEquals("", new String(process.getInputStream().readAllBytes()));
        }
    }

    /**
     * A clean start says nothing that reads as a problem before READY (no warning or error of the runtime, its
     * migrations or the JVM, which gets what local/run gives it), so a newcomer is not sent looking for one; and
     * stopping the process (SIGTERM) leaves no server behind.
     */
    @Test
    void aCleanStartSaysNothingAlarmingAndStoppingItLeavesNoServerBehind() throws Exception {
        List<String> command = javaCommand(fixture().toString(), "--no-demo");
        if (Runtime.version().feature() >= 24) {
            command.add(1, "--sun-misc-unsafe-memory-access=allow");
        }
        var builder = new ProcessBuilder(command);
        for (String port : List.of("RUNNER_API_PORT", "RUNNER_PG_PORT", "RUNNER_REDIS_PORT", "RUNNER_SQS_PORT", "RUNNER_SECRETS_PORT")) {
            builder.environment().put(port, "0");
        }
        Process process = builder.start();
        List<String> stderr = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread reader = Thread.ofVirtual().start(() -> new BufferedReader(new InputStreamReader(process.getErrorStream()))
                .lines().forEach(stderr::add));
        String ready;
        try (var stdout = new BufferedReader(new InputStreamReader(process.getInputStream()))) {
            ready = stdout.lines().filter(line -> line.startsWith("READY ")).findFirst().orElseThrow();
            // The runtime logs its summary just before READY: once it is read, so is every line before it.
            await().atMost(Duration.ofSeconds(10)).until(() -> List.copyOf(stderr).stream().anyMatch(line -> line.contains(" ready in ")));
            List<String> alarming = List.copyOf(stderr).stream()
                    .filter(line -> line.matches("(?i).*(\\bWARN|\\bERROR|\\bSEVERE|exception).*")).toList();
            assertEquals(List.of(), alarming, "lines before READY that read as a problem");

            List<Integer> ports = new ArrayList<>();
            Matcher port = Pattern.compile("127\\.0\\.0\\.1:(\\d+)").matcher(ready);
            while (port.find()) {
                ports.add(Integer.parseInt(port.group(1)));
            }
            assertEquals(5, ports.size(), ready);
            ports.forEach(p -> assertTrue(listening(p), "port " + p + " open while running"));

            process.destroy(); // SIGTERM, as Ctrl-C or a service manager would
            assertTrue(process.waitFor(60, TimeUnit.SECONDS), "stopped");
            await().atMost(Duration.ofSeconds(10)).until(() -> ports.stream().noneMatch(LocalEngineIT::listening));
        } finally {
            process.destroyForcibly();
            reader.join(Duration.ofSeconds(10));
        }
    }

    private static boolean listening(int port) {
        try (var socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static List<String> javaCommand(String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LocalRuntime.class.getName()));
        command.addAll(List.of(args));
        return command;
    }

    private static void waitForTicks(int count) {
        await().atMost(Duration.ofSeconds(20)).until(() -> Recorder.of("runner-TickFunction").size() >= count);
    }

    private static List<SQSEvent.SQSMessage> received(String function, String run) {
        return Recorder.of(function).stream()
                .flatMap(i -> ((SQSEvent) i.event()).getRecords().stream())
                .filter(m -> traced(m, run))
                .toList();
    }

    private static boolean traced(SQSEvent.SQSMessage message, String run) {
        var trace = message.getMessageAttributes().get("trace");
        return trace != null && run.equals(trace.getStringValue());
    }

    private static Path fixture() throws URISyntaxException {
        return Path.of(LocalEngineIT.class.getResource("/engine-template.yaml").toURI());
    }

}
