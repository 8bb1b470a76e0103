package dev.runner.webhook;

import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WebhookItemsTest {

    @Test
    void identifiesElementsByExternalIdThenEventIdThenContent() {
        assertEquals("a-1", only(WebhookService.items(Json.parse("{\"externalId\":\"a-1\"}"), "evt")).externalId());
        assertEquals("42", only(WebhookService.items(Json.parse("{\"externalId\":42}"), null)).externalId());
        assertEquals("evt-9", only(WebhookService.items(Json.parse("{\"name\":\"x\"}"), "evt-9")).externalId());
        String hashed = only(WebhookService.items(Json.parse("{\"name\":\"x\"}"), null)).externalId();
        assertTrue(hashed.startsWith("sha256:"), hashed);
        assertEquals(hashed, only(WebhookService.items(Json.parse("{ \"name\" : \"x\" }"), null)).externalId(), "same content, same id");
    }

    @Test
    void theEventIdHeaderNamesOnlyASingleObject() {
        List<ItemStore.NewItem> items = WebhookService.items(Json.parse("[{\"n\":1},{\"n\":2}]"), "evt-1");
        assertEquals(2, items.stream().map(ItemStore.NewItem::externalId).distinct().count());
    }

    @Test
    void refusesWhatIsNotObjects() {
        assertThrows(Json.InvalidJsonException.class, () -> WebhookService.items(Json.parse("[]"), null));
        assertThrows(Json.InvalidJsonException.class, () -> WebhookService.items(Json.parse("[1]"), null));
        assertThrows(Json.InvalidJsonException.class, () -> WebhookService.items(Json.parse("true"), null));
        assertThrows(Json.InvalidJsonException.class, () -> WebhookService.items(Json.parse("{\"externalId\":{}}"), null));
    }

    private static ItemStore.NewItem only(List<ItemStore.NewItem> items) {
        assertEquals(1, items.size());
        return items.getFirst();
    }
}
