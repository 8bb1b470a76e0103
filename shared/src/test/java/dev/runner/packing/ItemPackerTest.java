package dev.runner.packing;

import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.json.Json;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ItemPackerTest {

    private static final UUID RUN = UUID.randomUUID();

    @Test
    void aPageOfOneTenantAndHandlerFillsMessagesUpToTheItemCap() {
        List<ItemJob> page = IntStream.range(0, 250).mapToObj(i -> job(RUN, "t-1", "leads", Trigger.MANUAL, "e-" + i)).toList();

        List<ItemPacker.Parcel<Void>> parcels = new ItemPacker(100).pack(entries(page, 0));

        assertEquals(List.of(100, 100, 50), parcels.stream().map(ItemPacker.Parcel::items).toList());
        assertEquals(page, read(parcels), "every item once, in order");
        parcels.forEach(p -> assertEquals("t-1", p.message().groupId()));
    }

    @Test
    void aPageWhoseItemsWouldOverflowOneMessageSplitsUnderTheSizeLimit() {
        String longId = "x".repeat(2_000);
        List<ItemJob> page = IntStream.range(0, 300).mapToObj(i -> job(RUN, "t-1", "leads", Trigger.MANUAL, longId + i)).toList();

        List<ItemPacker.Parcel<Void>> parcels = new ItemPacker(1_000).pack(entries(page, 0));

        assertTrue(parcels.size() >= 3, "300 items of about 2 KB do not fit one 192 KiB message: " + parcels.size());
        for (ItemPacker.Parcel<Void> parcel : parcels) {
            int bytes = ItemMessage.utf8Length(parcel.message().body());
            assertTrue(bytes <= ItemPacker.MAX_BODY_BYTES, "a body of " + bytes + " bytes");
            assertTrue(bytes > ItemPacker.MAX_BODY_BYTES - 2_200 || parcel == parcels.getLast(), "each but the last is full: " + bytes);
        }
        assertEquals(page, read(parcels));
    }

    @Test
    void onlyItemsOfOneRunTenantHandlerTriggerAndDelayShareAMessage() {
        UUID otherRun = UUID.randomUUID();
        List<ItemPacker.Entry<String>> entries = new ArrayList<>();
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "leads", Trigger.MANUAL, "a"), 0, "m1"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "leads", Trigger.MANUAL, "b"), 0, "m2"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "leads", Trigger.MANUAL, "c"), 5, "m1"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-2", "leads", Trigger.MANUAL, "d"), 0, "m1"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "contacts", Trigger.MANUAL, "e"), 0, "m1"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "leads", Trigger.WEBHOOK, "f"), 0, "m1"));
        entries.add(new ItemPacker.Entry<>(job(otherRun, "t-1", "leads", Trigger.MANUAL, "g"), 0, "m1"));
        entries.add(new ItemPacker.Entry<>(job(RUN, "t-1", "leads", Trigger.MANUAL, "h"), 0, "m1"));

        List<ItemPacker.Parcel<String>> parcels = new ItemPacker(100).pack(entries);

        assertEquals(List.of(List.of("a", "b", "h"), List.of("c"), List.of("d"), List.of("e"), List.of("f"), List.of("g")),
                parcels.stream().map(p -> ItemMessage.read(Json.parse(p.message().body())).stream().map(ItemJob::externalId).toList()).toList());
        assertEquals(Set.of("m1", "m2"), parcels.getFirst().origins(), "the messages its items came in, each once");
        assertEquals(5, parcels.get(1).message().delaySeconds());
        assertEquals(Trigger.WEBHOOK, parcels.get(4).trigger());
    }

    @Test
    void aCapOfOneSendsEveryItemInTheOneItemShape() {
        List<ItemJob> page = IntStream.range(0, 3).mapToObj(i -> job(RUN, "t-1", "leads", Trigger.MANUAL, "e-" + i)).toList();

        List<ItemPacker.Parcel<Void>> parcels = new ItemPacker(1).pack(entries(page, 0));

        assertEquals(3, parcels.size());
        parcels.forEach(p -> assertEquals("item", Json.parse(p.message().body()).path("type").asText()));
    }

    private static List<ItemPacker.Entry<Void>> entries(List<ItemJob> jobs, int delay) {
        return jobs.stream().map(job -> new ItemPacker.Entry<Void>(job, delay, null)).toList();
    }

    private static List<ItemJob> read(List<? extends ItemPacker.Parcel<?>> parcels) {
        return parcels.stream().flatMap(p -> ItemMessage.read(Json.parse(p.message().body())).stream()).toList();
    }

    private static ItemJob job(UUID run, String tenant, String handler, Trigger trigger, String externalId) {
        return new ItemJob(run, UUID.randomUUID(), tenant, "crm", handler, Direction.INBOUND, trigger, externalId, 0, 0);
    }
}
