package dev.runner.integration;

import dev.runner.json.Json;
import dev.runner.security.WebhookScheme;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IntegrationTypeTest {

    private static final String HANDLERS = "\"handlers\":{\"leads\":{\"url\":\"https://handlers.example/leads\"}}";

    @Test
    void aTypeNamesItsWebhookSchemeAndStandardWebhooksIsTheDefault() {
        assertEquals(WebhookScheme.STANDARD, parse("{" + HANDLERS + "}").webhookScheme());
        IntegrationType github = parse("{\"webhookScheme\":\"github\"," + HANDLERS + "}");
        assertEquals(WebhookScheme.GITHUB, github.webhookScheme());
        assertEquals("github", github.toJson().path("webhookScheme").asText());
        assertEquals(github, IntegrationType.fromJson("crm-x", github.toJson()), "what the types cache holds reads back the same");
    }

    @Test
    void anUnknownSchemeIsRefusedWithTheOnesThereAre() {
        var e = assertThrows(Json.InvalidJsonException.class, () -> parse("{\"webhookScheme\":\"x-runner\"," + HANDLERS + "}"));
        assertTrue(e.getMessage().contains("standard, github, stripe, shopify"), e.getMessage());
    }

    private static IntegrationType parse(String body) {
        return IntegrationType.fromJson("crm-x", Json.parse(body));
    }
}
