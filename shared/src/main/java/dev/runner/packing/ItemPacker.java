package dev.runner.packing;

import dev.runner.integration.Direction;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemMessage;
import dev.runner.queue.OutgoingMessage;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Packs items bound for the items tiers into as few messages as SQS takes: items of one run,
 * tenant, handler and trigger that go out with the same delay (a tenant-window slot's second, a
 * deferral's or a backoff's) travel in one message ({@link ItemMessage}), up to {@code maxItems}
 * and {@link #MAX_BODY_BYTES}; a page whose items would overflow one message fills several. SQS
 * bills by the request and by each 64 KiB of it, so a message of many items costs its producer,
 * the event source's receive and delete a fraction of a request per item. Items that differ in
 * any of these never share a message, so none drags another's delay or attempts with it.
 */
public final class ItemPacker {

    /**
     * A body stays under this: SQS takes 256 KiB per message and per batch request, and a
     * message's attributes and SQS's own fields count towards it too.
     */
    public static final int MAX_BODY_BYTES = 192 * 1024;

    /**
     * One item to send.
     *
     * @param delaySeconds 0..900, when it is to be delivered
     * @param origin       what the caller needs back with each message (say, the message the item came in), or null
     */
    public record Entry<O>(ItemJob job, int delaySeconds, O origin) {}

    /** One message: the tier of {@code trigger}, the message, and the origins of the items it carries (each once, in order). */
    public record Parcel<O>(Trigger trigger, OutgoingMessage message, int items, Set<O> origins) {}

    private record Key(UUID runId, String tenantId, String integrationKey, String handlerKey, Direction direction, Trigger trigger,
                       int delaySeconds) {
        static Key of(Entry<?> entry) {
            ItemJob job = entry.job();
            return new Key(job.runId(), job.tenantId(), job.integrationKey(), job.handlerKey(), job.direction(), job.trigger(),
                    entry.delaySeconds());
        }
    }

    private final int maxItems;
    private final int maxBodyBytes;

    /** @param maxItems most items in one message; 1 sends every item in a message of its own (the one-item shape) */
    public ItemPacker(int maxItems) {
        this(maxItems, MAX_BODY_BYTES);
    }

    ItemPacker(int maxItems, int maxBodyBytes) {
        if (maxItems < 1) {
            throw new IllegalArgumentException("maxItems must be at least 1: " + maxItems);
        }
        this.maxItems = maxItems;
        this.maxBodyBytes = maxBodyBytes;
    }

    public int maxItems() {
        return maxItems;
    }

    /** The messages for {@code entries}, groups in the order of their first item, items in their order. */
    public <O> List<Parcel<O>> pack(List<Entry<O>> entries) {
        Map<Key, List<Entry<O>>> groups = new LinkedHashMap<>();
        for (Entry<O> entry : entries) {
            groups.computeIfAbsent(Key.of(entry), k -> new ArrayList<>()).add(entry);
        }
        List<Parcel<O>> parcels = new ArrayList<>(groups.size());
        groups.forEach((key, members) -> split(key, members, parcels));
        return parcels;
    }

    /** One group's messages: each as full as the item cap and the size limit let it be. */
    private <O> void split(Key key, List<Entry<O>> members, List<Parcel<O>> parcels) {
        if (maxItems == 1 || members.size() == 1) {
            members.forEach(entry -> parcels.add(parcel(key, List.of(entry), null)));
            return;
        }
        int overhead = ItemMessage.overheadBytes(members.getFirst().job());
        List<Entry<O>> current = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        int bytes = overhead;
        for (Entry<O> entry : members) {
            String part = ItemMessage.part(entry.job());
            int size = ItemMessage.utf8Length(part) + 1;
            if (!current.isEmpty() && (current.size() == maxItems || bytes + size > maxBodyBytes)) {
                parcels.add(parcel(key, current, parts));
                current = new ArrayList<>();
                parts = new ArrayList<>();
                bytes = overhead;
            }
            current.add(entry);
            parts.add(part);
            bytes += size;
        }
        parcels.add(parcel(key, current, parts));
    }

    private static <O> Parcel<O> parcel(Key key, List<Entry<O>> entries, List<String> parts) {
        ItemJob head = entries.getFirst().job();
        String body = entries.size() == 1 ? ItemMessage.write(List.of(head)) : ItemMessage.packed(head, parts);
        Set<O> origins = new LinkedHashSet<>();
        entries.forEach(entry -> {
            if (entry.origin() != null) {
                origins.add(entry.origin());
            }
        });
        return new Parcel<>(key.trigger(), new OutgoingMessage(body, key.delaySeconds(), head.tenantId()), entries.size(), origins);
    }
}
