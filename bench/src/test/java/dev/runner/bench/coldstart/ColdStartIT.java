package dev.runner.bench.coldstart;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cold-start harness works: a fresh JVM through the real runtime interface client against the
 * local Runtime API answers its events, and a function of the template answers its events/ event
 * on the embedded servers. Needs the reactor's functions jar; runs in seconds, measures nothing.
 */
class ColdStartIT {

    private static final Path PROJECT = Path.of("..");
    private static final Path WORK = Path.of("target/coldstart-it");

    @Test
    void helloAnswersBothEventsThroughTheRuntimeInterfaceClient() throws Exception {
        Files.createDirectories(WORK);
        var jvm = LambdaJvm.locate(Path.of("target/lambda-runtime"));
        var hello = new Subject("Hello", "runner-hello", HelloFunction.class.getName() + "::handleRequest",
                "arn:aws:lambda:us-east-1:000000000000:function:runner-hello", 512, Duration.ofSeconds(30),
                TaskRoot.hello(WORK, Path.of("target/lambda-runtime/hello-lib")), java.util.Map.of(), List.of());
        try (var api = RuntimeApi.start()) {
            var sample = jvm.run(hello, List.of("{\"a\":1}", "{\"a\":1,\"b\":2}"), api, List.of(), WORK.resolve("hello.log"),
                    Duration.ofSeconds(30));

            assertFalse(sample.failed(), sample.answer());
            assertEquals("\"hello 1\"", sample.answer());
            assertTrue(sample.initMs() > 0 && sample.initMs() < sample.totalMs(), "init inside the cold start: " + sample);
            assertTrue(sample.warmMs() >= 0, "the second event was answered: " + sample);
        }
    }

    @Test
    void aSnapStartInitIsCheckpointedAtRestoreNextAndItsRestoredProcessAnswers() throws Exception {
        Path built = Path.of("target/criu/criu");
        var criu = Criu.locate(Files.isExecutable(built) ? built : null);
        Assumptions.assumeTrue(criu.isPresent(), "no CRIU runs here (bench/snapstart/build-criu builds it, as root): the SnapStart path is not tried");
        Files.createDirectories(WORK);
        var jvm = LambdaJvm.locate(Path.of("target/lambda-runtime"));
        var hello = new Subject("Hello", "runner-hello", HelloFunction.class.getName() + "::handleRequest",
                "arn:aws:lambda:us-east-1:000000000000:function:runner-hello", 512, Duration.ofSeconds(30),
                TaskRoot.hello(WORK, Path.of("target/lambda-runtime/hello-lib")), java.util.Map.of(), List.of());
        var checkpointed = new AtomicBoolean();
        try (var api = RuntimeApi.start()) {
            var sample = jvm.run(hello, List.of("{\"a\":1}", "{\"a\":1,\"b\":2}"), api, List.of(), WORK.resolve("hello-restored.log"),
                    Duration.ofSeconds(30), new LambdaJvm.Snapshot(criu.get(), WORK.resolve("hello-images"), () -> checkpointed.set(true), () -> {}));

            assertFalse(sample.failed(), sample.answer());
            assertTrue(checkpointed.get(), "the init asked for /restore/next, and was dumped");
            // criu dump ends the process it dumps: whatever answered was restored.
            assertEquals("\"hello 1\"", sample.answer());
            assertTrue(sample.restore().restoreMs() > 0 && sample.restore().imageBytes() > 0, sample.toString());
            assertTrue(sample.totalMs() < (sample.answeredNanos() - sample.startNanos()) / 1e6, "timed from the restore: " + sample);
        }
    }

    @Test
    void aTemplateFunctionAndTheLibrariesFloorAnswerTheirEventsOnTheEmbeddedServers() {
        var options = new ColdStart.Options(1, List.of("DeadLetter"), false, false, true, false, null, false, null,
                List.of(new ColdStart.Setup(PROJECT.resolve("functions/target/runner-functions.zip"), false, null, List.of())),
                PROJECT.resolve("template.yaml"), PROJECT.resolve("events"), Path.of("target/lambda-runtime"), WORK);

        List<ColdStart.Result> results = ColdStart.run(options).getFirst();

        assertEquals(List.of("Hello", "Floor-metrics", "Floor-metrics+postgres", "Floor-metrics+postgres+redis", "DeadLetter"),
                results.stream().map(r -> r.subject().label()).toList());
        var deadLetter = results.get(4).samples().getFirst();
        assertFalse(deadLetter.failed(), deadLetter.answer());
        assertEquals("{\"batchItemFailures\":[]}", deadLetter.answer());
        assertTrue(ColdStart.tookMainPath(deadLetter.answer()));
        // The floor did what it stands for: each part reached its server.
        assertEquals(List.of("\"floor metrics metrics\"", "\"floor metrics postgres=1 metrics\"", "\"floor metrics postgres=1 redis=PONG metrics\""),
                results.subList(1, 4).stream().map(r -> r.samples().getFirst().answer()).toList());
    }
}
