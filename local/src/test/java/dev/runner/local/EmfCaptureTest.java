package dev.runner.local;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** stdout's EMF lines go to the metrics file byte for byte, every other line to stdout; stdout is restored. A temporary file only. */
class EmfCaptureTest {

    @Test
    void routesEmfLinesToTheFileAndEverythingElseToStdout() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        Path file = Files.createTempFile("emf", ".jsonl");
        System.setOut(new PrintStream(stdout, true, StandardCharsets.UTF_8));
        PrintStream before = System.out;
        try {
            try (EmfCapture capture = EmfCapture.install(file)) {
                System.out.println("READY api=http://127.0.0.1:3000");
                System.out.println("{\"_aws\":{\"Timestamp\":1,\"CloudWatchMetrics\":[]},\"Function\":\"runner-X\"}");
                System.out.print("{\"_aw");
                System.out.flush();
                System.out.println("s\":{\"Timestamp\":2}}");
                System.out.print("no newline yet");
                System.out.flush();
                System.out.println(" and {\"_aws\": not at the start");
                assertEquals(file, capture.file());
            }
            assertSame(before, System.out, "stdout restored");
            assertEquals(List.of("{\"_aws\":{\"Timestamp\":1,\"CloudWatchMetrics\":[]},\"Function\":\"runner-X\"}", "{\"_aws\":{\"Timestamp\":2}}"),
                    Files.readAllLines(file));
            assertEquals("READY api=http://127.0.0.1:3000\nno newline yet and {\"_aws\": not at the start\n",
                    stdout.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
        } finally {
            System.setOut(original);
            Files.deleteIfExists(file);
        }
    }
}
