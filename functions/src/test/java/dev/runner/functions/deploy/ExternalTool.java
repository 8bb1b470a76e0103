package dev.runner.functions.deploy;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A command-line tool the deployment tests run (the SAM translator through python3, cfn-lint):
 * installed on the project's machines, not by the build, so a test without it is skipped with
 * the reason instead of failing.
 */
final class ExternalTool {

    /** The repository root: tests run in their module's directory. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    record Result(int exitCode, String output) {}

    private ExternalTool() {}

    /** Skips the calling test unless {@code probe} runs and exits 0, saying why. */
    static void assumeInstalled(String what, String... probe) {
        missing(what, probe).ifPresent(ExternalTool::skip);
    }

    /** Why {@code what} cannot be used here, or empty when {@code probe} runs and exits 0. */
    static Optional<String> missing(String what, String... probe) {
        Result result = probe(probe);
        return result.exitCode() == 0 ? Optional.empty() : Optional.of("skipped: " + what + " is not installed here ("
                + String.join(" ", probe) + ": " + result.output().strip().lines().reduce((first, last) -> last).orElse("") + ")");
    }

    /** Skips the calling test with {@code reason}, printed too: the build's output shows no skip reasons. */
    static void skip(String reason) {
        System.out.println(reason);
        Assumptions.abort(reason);
    }

    private static Result probe(String... command) {
        try {
            return run(List.of(command), Duration.ofSeconds(60));
        } catch (IllegalStateException e) {
            return new Result(-1, e.getMessage());
        }
    }

    static Result run(List<String> command, Duration timeout) {
        Path output;
        try {
            output = Files.createTempFile("tool", ".out");
        } catch (IOException e) {
            throw new IllegalStateException("no temporary file: " + e.getMessage(), e);
        }
        var builder = new ProcessBuilder(command).directory(ROOT.toFile())
                .redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().putIfAbsent("AWS_DEFAULT_REGION", "us-east-1");
        try {
            Process process = builder.start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout);
            }
            return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(command.get(0) + " cannot run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command.get(0), e);
        } finally {
            try {
                Files.deleteIfExists(output);
            } catch (IOException ignored) {
                // a temporary file left behind is harmless
            }
        }
    }
}
