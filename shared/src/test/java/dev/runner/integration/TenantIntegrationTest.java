package dev.runner.integration;

import dev.runner.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TenantIntegrationTest {

    private static final String CURRENT = "current-secret-0123456789";
    private static final String PREVIOUS = "previous-secret-0123456789";

    @Test
    void oneSecretOrSeveralDuringARotationCurrentFirst() {
        assertEquals(List.of(CURRENT), parse("{\"webhookSecret\":\"" + CURRENT + "\"}").webhookSecrets());
        assertEquals(List.of(CURRENT, PREVIOUS),
                parse("{\"webhookSecrets\":[\"" + CURRENT + "\",\"" + PREVIOUS + "\"]}").webhookSecrets());
    }

    @Test
    void leftOutSecretsAreKeptAsStored() {
        assertNull(parse("{\"enabled\":true}").webhookSecrets());
    }

    @Test
    void refusesSecretsItCannotUseNamingTheFieldNotTheSecret() {
        for (String body : List.of(
                "{\"webhookSecret\":\"short\"}",
                "{\"webhookSecrets\":[]}",
                "{\"webhookSecrets\":[\"" + CURRENT + "\",\"" + PREVIOUS + "\",\"" + CURRENT + "x\",\"" + PREVIOUS + "x\"]}",
                "{\"webhookSecrets\":\"" + CURRENT + "\"}",
                "{\"webhookSecrets\":[42]}",
                "{\"webhookSecret\":\"" + CURRENT + "\",\"webhookSecrets\":[\"" + PREVIOUS + "\"]}")) {
            var e = assertThrows(Json.InvalidJsonException.class, () -> parse(body), body);
            assertFalse(e.getMessage().contains(CURRENT) || e.getMessage().contains(PREVIOUS) || e.getMessage().contains("short\""), e.getMessage());
        }
    }

    @Test
    void theApiViewSaysHowManySecretsAreSetAndNeverWhich() {
        var view = parse("{\"webhookSecrets\":[\"" + CURRENT + "\",\"" + PREVIOUS + "\"]}").toJson();
        assertTrue(view.path("webhookSecretSet").asBoolean());
        assertEquals(2, view.path("webhookSecretCount").asInt());
        String text = Json.write(view);
        assertFalse(text.contains(CURRENT) || text.contains(PREVIOUS), text);
        assertFalse(parse("{\"webhookSecret\":\"" + CURRENT + "\"}").toString().contains(CURRENT));
    }

    private static TenantIntegration parse(String body) {
        return TenantIntegration.fromJson("t-1", "crm-x", Json.parse(body));
    }
}
