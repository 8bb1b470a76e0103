package dev.runner.pipeline;

import dev.runner.integration.Direction;
import dev.runner.integration.HandlerRef;
import dev.runner.integration.HandlerSpec;
import dev.runner.pipeline.Settlement.Item;
import dev.runner.trigger.Trigger;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How a batch of many items is split into waves: by what a limited handler's leases may call in one. */
class ItemWorkerWavesTest {

    private static final HandlerRef LIMITED = new HandlerRef("crm", "limited");
    private static final HandlerRef BATCHED = new HandlerRef("crm", "batched");
    private static final HandlerRef FREE = new HandlerRef("crm", "free");

    @Test
    void aLimitedHandlersItemsGoInWavesOfItsLeasesCallsAndAnUnlimitedOnesInWavesOfCallsAllInFlight() {
        Map<HandlerRef, List<Item>> groups = new LinkedHashMap<>();
        groups.put(LIMITED, items(90));
        groups.put(BATCHED, items(500));
        groups.put(FREE, items(freeItems()));
        Map<HandlerRef, HandlerSpec> specs = Map.of(
                LIMITED, spec(false, 4, 1),
                BATCHED, spec(true, 2, 10),
                FREE, spec(true, 0, 10));

        List<Map<HandlerRef, List<Item>>> waves = ItemWorker.waves(groups, specs);

        int limitedWave = 4 * ItemWorker.WAVE_CALLS_PER_LANE;
        int batchedWave = 2 * 10 * ItemWorker.WAVE_CALLS_PER_LANE;
        int freeWave = 10 * Math.ceilDiv(ItemWorker.UNLIMITED_WAVE_ITEMS, 10);
        assertEquals(List.of(limitedWave, batchedWave, freeWave), sizes(waves.getFirst()));
        assertEquals(List.of(limitedWave, batchedWave, freeWave), sizes(waves.get(1)));
        assertEquals(List.of(90 - 2 * limitedWave, batchedWave, freeItems() - 2 * freeWave), sizes(waves.get(2)));
        assertEquals((int) Math.ceil(500.0 / batchedWave), waves.size(), "the longest group sets the number of waves");
        List<Item> limited = new ArrayList<>();
        waves.forEach(wave -> limited.addAll(wave.getOrDefault(LIMITED, List.of())));
        assertEquals(groups.get(LIMITED), limited, "every item once, in its order");
    }

    @Test
    void anUnknownHandlersItemsGoInOneWave() {
        List<Map<HandlerRef, List<Item>>> waves = ItemWorker.waves(Map.of(LIMITED, items(100)), Map.of());

        assertEquals(1, waves.size());
    }

    /** Two waves and a part of an unlimited batch handler's. */
    private static int freeItems() {
        return 2 * 10 * Math.ceilDiv(ItemWorker.UNLIMITED_WAVE_ITEMS, 10) + 5;
    }

    private static List<Integer> sizes(Map<HandlerRef, List<Item>> wave) {
        return wave.values().stream().map(List::size).toList();
    }

    private static List<Item> items(int n) {
        return IntStream.range(0, n).mapToObj(i -> TestItems.item("t-" + (i % 3), Trigger.MANUAL)).toList();
    }

    private static HandlerSpec spec(boolean batch, int concurrency, int batchSize) {
        return new HandlerSpec("h", URI.create("https://handler.example"), Direction.INBOUND, batch,
                new HandlerSpec.Configs(concurrency, 0, batchSize, 10_000));
    }
}
