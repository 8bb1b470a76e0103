package dev.runner.redis;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which error replies are an outage (the caller's fallback applies) and which a bug. No I/O. */
class RedisErrorTest {

    @Test
    void aServerThatCannotServeNowIsAnOutage() {
        assertTrue(RedisConnection.isOutage("LOADING Redis is loading the dataset in memory"));
        assertTrue(RedisConnection.isOutage("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."));
        assertTrue(RedisConnection.isOutage("CLUSTERDOWN The cluster is down"));
        assertTrue(RedisConnection.isOutage("TRYAGAIN Multiple keys request during rehashing of slot"));
        assertTrue(RedisConnection.isOutage("OOM command not allowed when used memory > 'maxmemory'."));
        assertTrue(RedisConnection.isOutage("READONLY You can't write against a read only replica."));
    }

    @Test
    void aFailingScriptOrAWrongCallIsABug() {
        assertFalse(RedisConnection.isOutage("ERR Error running script (call to f_0123): @user_script:32: too many results to unpack"));
        assertFalse(RedisConnection.isOutage("ERR Error running script (call to f_0123): @user_script:12: LOADING in a message"));
        assertFalse(RedisConnection.isOutage("WRONGTYPE Operation against a key holding the wrong kind of value"));
        assertFalse(RedisConnection.isOutage(null));
    }
}
