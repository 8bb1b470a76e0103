package dev.runner.webhook;

import dev.runner.json.Json;
import dev.runner.security.WebhookScheme;
import dev.runner.security.WebhookVerification.Verified;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A delivery is identified by what its scheme signs, so that a capture sent under another id header is the same delivery. */
class DeliveryIdentityTest {

    private static final String BODY = "{\"id\":\"evt_1\",\"externalId\":\"a\"}";

    @Test
    void standardWebhooksDeliveriesAreTheirSignedWebhookId() {
        assertEquals("msg_1", id(WebhookScheme.STANDARD, "msg_1", BODY));
    }

    @Test
    void stripeDeliveriesAreTheirEventIdInTheSignedBody() {
        assertEquals("evt_1", id(WebhookScheme.STRIPE, null, BODY));
        assertTrue(id(WebhookScheme.STRIPE, null, "{\"externalId\":\"a\"}").startsWith("sha256:"), "no event id: the body");
        assertTrue(id(WebhookScheme.STRIPE, null, "{\"id\":\"" + "e".repeat(513) + "\"}").startsWith("sha256:"), "too long to keep");
    }

    @Test
    void githubAndShopifyDeliveriesAreTheirBodyBecauseTheirIdHeaderIsNotSigned() {
        String github = id(WebhookScheme.GITHUB, "delivery-header-1", BODY);
        assertEquals(github, id(WebhookScheme.GITHUB, "delivery-header-2", BODY), "another id header, same delivery");
        assertEquals(github, id(WebhookScheme.SHOPIFY, "x", BODY));
        assertTrue(github.startsWith("sha256:"), github);
        assertNotEquals(github, id(WebhookScheme.GITHUB, "delivery-header-1", BODY + " "), "the raw bytes, not the JSON they parse to");
    }

    private static String id(WebhookScheme scheme, String header, String body) {
        return WebhookService.deliveryId(scheme, new Verified(header), Json.parse(body), body.getBytes(StandardCharsets.UTF_8));
    }
}
