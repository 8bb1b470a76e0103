package dev.runner.bench.coldstart;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ColdStartTest {

    @Test
    void anAnswerOffTheMainPathIsFlagged() {
        assertTrue(ColdStart.tookMainPath("{\"statusCode\":202,\"body\":\"{}\"}"));
        assertTrue(ColdStart.tookMainPath("{\"batchItemFailures\":[]}"));
        assertTrue(ColdStart.tookMainPath("\"fired=1 skipped=0 resent=0 itemsResent=0\""));
        assertFalse(ColdStart.tookMainPath("{\"statusCode\":401,\"body\":\"{}\"}"));
        assertFalse(ColdStart.tookMainPath("{\"batchItemFailures\":[{\"itemIdentifier\":\"m-1\"}]}"));
        assertFalse(ColdStart.tookMainPath("{\"Status\":\"FAILED\",\"Reason\":\"migration failed\"}"));
        assertFalse(ColdStart.tookMainPath("\"fired=0 skipped=0 resent=0 itemsResent=0\""));
    }
}
