package dev.runner.local;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LocalOptionsTest {

    @Test
    void defaultsAreTheDesignPorts() {
        LocalOptions options = LocalOptions.parse(new String[0], Map.of());

        assertEquals(Path.of("template.yaml"), options.template());
        assertEquals(3000, options.apiPort());
        assertEquals(9324, options.sqsPort());
        assertEquals(6380, options.redisPort());
        assertEquals(5433, options.postgresPort());
        assertEquals(Optional.empty(), options.scheduleTick());
        assertTrue(options.demo());
    }

    @Test
    void readsPortsAndTickFromTheEnvironmentAndTheRestFromArguments() {
        LocalOptions options = LocalOptions.parse(
                new String[] {"other.yaml", "--parameter", "MaxAttempts=5", "-p", "Stage=a=b", "--no-demo"},
                Map.of("RUNNER_API_PORT", "0", "RUNNER_PG_PORT", "15432", "RUNNER_SCHEDULE_TICK_MS", "250"));

        assertEquals(Path.of("other.yaml"), options.template());
        assertEquals(0, options.apiPort());
        assertEquals(15432, options.postgresPort());
        assertEquals(Optional.of(Duration.ofMillis(250)), options.scheduleTick());
        assertEquals(Map.of("MaxAttempts", "5", "Stage", "a=b"), options.parameterOverrides());
        assertFalse(options.demo());
    }

    @Test
    void rejectsWhatItCannotUseWithTheVariableNamed() {
        assertEquals("RUNNER_API_PORT must be a port number: abc",
                assertThrows(IllegalArgumentException.class, () -> LocalOptions.parse(new String[0], Map.of("RUNNER_API_PORT", "abc"))).getMessage());
        assertEquals("RUNNER_SQS_PORT out of 0..65535: 70000",
                assertThrows(IllegalArgumentException.class, () -> LocalOptions.parse(new String[0], Map.of("RUNNER_SQS_PORT", "70000"))).getMessage());
        assertEquals("RUNNER_SCHEDULE_TICK_MS must be > 0: 0",
                assertThrows(IllegalArgumentException.class, () -> LocalOptions.parse(new String[0], Map.of("RUNNER_SCHEDULE_TICK_MS", "0"))).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LocalOptions.parse(new String[] {"--verbose"}, Map.of()))
                .getMessage().startsWith("unknown option --verbose"));
    }
}
