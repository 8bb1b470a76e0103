package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.CloudFormationCustomResourceEvent;
import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.functions.CloudFormationResponse.Status;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The answer to CloudFormation stays within its 4 KB limit whatever the reason holds. */
class CloudFormationResponseTest {

    private static final CloudFormationCustomResourceEvent EVENT = CloudFormationCustomResourceEvent.builder()
            .withStackId("arn:aws:cloudformation:us-east-1:123456789012:stack/runner/5b6c7d80-aef1-11f0-9a2b-0e1f2a3b4c5d")
            .withRequestId("7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b")
            .withLogicalResourceId("Migration").build();

    @Test
    void aShortReasonIsSentWhole() {
        JsonNode body = Json.parse(CloudFormationResponse.body(EVENT, Status.FAILED, "relation \"runs\" exists", "runner-schema"));
        assertEquals("FAILED", body.path("Status").asText());
        assertEquals("relation \"runs\" exists", body.path("Reason").asText());
        assertEquals("runner-schema", body.path("PhysicalResourceId").asText());
        assertEquals("7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b", body.path("RequestId").asText());
        assertEquals("Migration", body.path("LogicalResourceId").asText());
    }

    @Test
    void aHugeReasonIsCutToTheLongestPrefixThatFits() {
        // Quotes, newlines and control characters grow when escaped; ü and 😀 take 2 and 4 bytes.
        String reason = "ERROR: syntax error at \"ü😀\"\n\t\u0001".repeat(5_000);
        byte[] bytes = CloudFormationResponse.body(EVENT, Status.FAILED, reason, "runner-schema");

        assertTrue(bytes.length <= CloudFormationResponse.MAX_BYTES, bytes.length + " bytes");
        assertTrue(bytes.length > CloudFormationResponse.MAX_BYTES - 16, "cut far shorter than needed: " + bytes.length + " bytes");
        String sent = Json.parse(bytes).path("Reason").asText();
        assertTrue(sent.endsWith(CloudFormationResponse.TRUNCATED), sent);
        String kept = sent.substring(0, sent.length() - CloudFormationResponse.TRUNCATED.length());
        assertTrue(reason.startsWith(kept), "the reason keeps its beginning");
        assertFalse(kept.isEmpty());
    }

    @Test
    void aCutNeverSplitsACharacter() {
        for (int padding = 0; padding < 8; padding++) {
            String reason = "x".repeat(padding) + "😀".repeat(2_000);
            String sent = Json.parse(CloudFormationResponse.body(EVENT, Status.FAILED, reason, "runner-schema")).path("Reason").asText();
            String kept = sent.substring(0, sent.length() - CloudFormationResponse.TRUNCATED.length());
            assertFalse(Character.isHighSurrogate(kept.charAt(kept.length() - 1)), "a lone surrogate with padding " + padding);
            assertTrue(reason.startsWith(kept));
        }
    }
}
