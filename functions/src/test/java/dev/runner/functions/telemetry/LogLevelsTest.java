package dev.runner.functions.telemetry;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogLevelsTest {

    @Test
    void aSpecIsARootLevelThenPrefixLevels() {
        assertEquals(Map.of("", Level.INFO), LogLevels.parse(" "));
        assertEquals(Map.of("", Level.WARN, "dev.runner", Level.INFO, "io.lettuce.core", Level.DEBUG),
                LogLevels.parse("warn,dev.runner=info, io.lettuce.core = debug"));
        assertEquals(Map.of("", Level.OFF), LogLevels.parse("OFF"));
    }

    @Test
    void aMisspeltLevelIsRefusedNamingTheLevelsThereAre() {
        var e = assertThrows(IllegalArgumentException.class, () -> LogLevels.parse("warn,dev.runner=verbose"));
        assertTrue(e.getMessage().contains("'verbose'") && e.getMessage().contains("trace, debug, info, warn, error, off"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LogLevels.parse("warn,info"));
    }

    @Test
    void applyingASpecSetsLog4jsLevelsAndAPrefixNoLongerNamedFollowsTheRoot() {
        String before = LogLevels.current();
        try {
            LogLevels.apply("warn,dev.runner=debug");
            assertEquals(Level.WARN, LogManager.getLogger("io.lettuce.core.RedisClient").getLevel());
            assertEquals(Level.DEBUG, LogManager.getLogger("dev.runner.pipeline.ItemWorker").getLevel());
            LogLevels.apply("error");
            assertEquals(Level.ERROR, LogManager.getLogger("dev.runner.pipeline.ItemWorker").getLevel());
        } finally {
            LogLevels.apply(before);
        }
    }
}
