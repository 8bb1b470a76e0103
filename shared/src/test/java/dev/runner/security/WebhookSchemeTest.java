package dev.runner.security;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WebhookSchemeTest {

    @Test
    void aTypeWithoutASchemeUsesStandardWebhooks() {
        assertEquals(WebhookScheme.STANDARD, WebhookScheme.fromWire(null));
    }

    @Test
    void readsEachSchemeByItsWireName() {
        for (WebhookScheme scheme : WebhookScheme.values()) {
            assertEquals(scheme, WebhookScheme.fromWire(scheme.wireName()));
        }
        assertEquals("github", WebhookScheme.GITHUB.wireName());
    }

    @Test
    void refusesAnUnknownSchemeNamingTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WebhookScheme.fromWire("GitHub"));
        assertEquals("webhookScheme must be one of standard, github, stripe, shopify: GitHub", e.getMessage());
    }

    @Test
    void onlySchemesThatSignTheIdentityMakeItADedupKey() {
        assertTrue(WebhookScheme.STANDARD.signsIdentity() && WebhookScheme.STANDARD.signsTime());
        assertTrue(WebhookScheme.STRIPE.signsIdentity() && WebhookScheme.STRIPE.signsTime());
        assertFalse(WebhookScheme.GITHUB.signsIdentity() || WebhookScheme.GITHUB.signsTime());
        assertFalse(WebhookScheme.SHOPIFY.signsIdentity() || WebhookScheme.SHOPIFY.signsTime());
    }
}
