package dev.runner.intake;

import dev.runner.coalescing.Coalescing;
import dev.runner.delivery.DeliveryStore;
import dev.runner.integration.HandlerSpec;
import dev.runner.item.ItemJob;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.metrics.Metrics;
import dev.runner.pipeline.ItemDispatcher;
import dev.runner.queue.QueueClient;
import dev.runner.store.Ids;
import dev.runner.trigger.Trigger;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The event intake (docs/webhooks.md, docs/ingest.md): deliveries from outside, a webhook or an ingest batch's
 * messages, accepted with one Postgres statement and one SQS request. The statement records the deliveries, and for
 * each new one its run, its items and the record that their messages are owed (the outbox), all in one transaction
 * ({@link DeliveryStore#accept}); the items are then sent to their tier ({@link ItemDispatcher#dispatch}). A send
 * that fails leaves the record for the scheduler's sweep, so the delivery is accepted all the same.
 *
 * <p>The record of a send that went out is deleted by the next accept's statement, which runs anyway, rather than by
 * a statement of its own: one this instance's last accept leaves behind is found by the sweep a grace later
 * (RUNNER_SWEEP_UNSENT_S), which sends only items still queued (a claimed item's message went out) and then deletes
 * it (docs/how-work-flows.md, "the outbox").
 */
public final class EventIntake {

    private static final Log LOG = Log.of(EventIntake.class);

    /**
     * A verified delivery: its identity, deduplicated per tenant integration and remembered for {@code kept}, and its
     * elements in order (an element whose externalId an earlier element of the same delivery has is a duplicate).
     */
    public record Delivery(String tenantId, String integrationKey, HandlerSpec handler, String deliveryId, Duration kept,
                           List<ItemStore.NewItem> items) {
        public Delivery {
            items = List.copyOf(items);
        }
    }

    /**
     * What became of a delivery. New: its run made with {@code accepted − duplicates} items. A repeat (seen within its
     * window, or earlier in the same call): nothing made, {@code runId} its first arrival's (null when that made none
     * or is gone), every element a duplicate.
     */
    public record Accepted(UUID runId, boolean fresh, int accepted, int duplicates) {}

    private final DeliveryStore deliveries;
    private final ItemDispatcher dispatcher;
    private final Metrics metrics;
    private final Clock clock;
    /** Records of sends that went out, deleted by the next accept's statement. */
    private final Queue<UUID> settled = new ConcurrentLinkedQueue<>();

    public EventIntake(DeliveryStore deliveries, ItemDispatcher dispatcher, Clock clock) {
        this(deliveries, dispatcher, Metrics.NONE, clock);
    }

    public EventIntake(DeliveryStore deliveries, ItemDispatcher dispatcher, Metrics metrics, Clock clock) {
        this.deliveries = deliveries;
        this.dispatcher = dispatcher;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Accepts the deliveries, each with {@code trigger}: one statement, then one send of the new items (one request
     * per ten messages). Deliveries of one tenant integration and handler share a run, unless an externalId would
     * repeat in it. Throws when the statement fails (nothing was accepted) or when this function may not send to the
     * tier (after the commit: a deployment bug); a failed send is left to the sweep. Returns one answer per delivery.
     */
    public List<Accepted> accept(Trigger trigger, List<Delivery> offered) {
        Batch batch = Batch.of(trigger, offered, clock);
        List<UUID> settledBefore = drainSettled();
        UUID owedSendId = Ids.next(clock);
        DeliveryStore.Accepted accepted;
        try {
            accepted = deliveries.acceptKeepingRecords(batch.offered(), batch.runs(), batch.items(), owedSendId, settledBefore);
        } catch (RuntimeException e) {
            settled.addAll(settledBefore);
            throw e;
        }
        List<DeliveryStore.Outcome> outcomes = accepted.outcomes();
        Coalescing.Sends sends = Coalescing.sends(batch.jobs(outcomes), accepted.coalesced());
        if (!sends.superseded().isEmpty()) {
            metrics.itemsSuperseded(sends.superseded().size(), sends.tenantsSuperseded());
        }
        if (!sends.jobs().isEmpty()) {
            send(sends, owedSendId);
        } else if (!sends.superseded().isEmpty()) {
            settled.add(owedSendId); // every item it owed was superseded: nothing to send
        }
        return batch.answers(outcomes);
    }

    private void send(Coalescing.Sends sends, UUID owedSendId) {
        List<ItemJob> jobs = sends.jobs();
        try {
            dispatcher.dispatch(jobs, sends.waitSeconds());
        } catch (QueueClient.NotGranted e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("send after commit failed; the sweep sends these items", "items", jobs.size(), "error", e);
            return;
        }
        settled.add(owedSendId);
    }

    private List<UUID> drainSettled() {
        List<UUID> drained = new ArrayList<>();
        for (UUID id = settled.poll(); id != null; id = settled.poll()) {
            drained.add(id);
        }
        return drained;
    }

    /**
     * One call's deliveries as the statement takes them: each identity once (a later copy in the same call answers as
     * a repeat of the first), each delivery's elements once per externalId, and runs by tenant integration and handler.
     */
    private record Batch(Trigger trigger, List<Delivery> given, int[] firstCopy, List<DeliveryStore.Offered> offered,
                         List<DeliveryStore.NewRun> runs, List<DeliveryStore.NewItem> items, Map<UUID, RunOf> runOf,
                         int[] duplicatesOf) {

        /** Who a run is for, to build its items' jobs. */
        private record RunOf(String tenantId, String integrationKey, HandlerSpec handler) {}

        private record Identity(String tenantId, String integrationKey, String deliveryId) {}

        private record Group(String tenantId, String integrationKey, String handlerKey) {}

        static Batch of(Trigger trigger, List<Delivery> given, Clock clock) {
            int[] firstCopy = new int[given.size()];
            int[] duplicatesOf = new int[given.size()];
            Map<Identity, Integer> seen = new HashMap<>();
            List<DeliveryStore.Offered> offered = new ArrayList<>();
            List<DeliveryStore.NewRun> runs = new ArrayList<>();
            List<DeliveryStore.NewItem> items = new ArrayList<>();
            Map<UUID, RunOf> runOf = new LinkedHashMap<>();
            // Per group, its runs with the externalIds each holds: a delivery goes to the first without any of its own.
            Map<Group, List<Map.Entry<UUID, Set<String>>>> groups = new HashMap<>();
            for (int i = 0; i < given.size(); i++) {
                Delivery delivery = given.get(i);
                Integer first = seen.putIfAbsent(new Identity(delivery.tenantId(), delivery.integrationKey(), delivery.deliveryId()), i);
                firstCopy[i] = first == null ? i : first;
                if (first != null) {
                    continue;
                }
                Map<String, ItemStore.NewItem> unique = new LinkedHashMap<>();
                delivery.items().forEach(item -> unique.putIfAbsent(item.externalId(), item));
                duplicatesOf[i] = delivery.items().size() - unique.size();
                List<Map.Entry<UUID, Set<String>>> groupRuns = groups.computeIfAbsent(
                        new Group(delivery.tenantId(), delivery.integrationKey(), delivery.handler().handlerKey()), g -> new ArrayList<>());
                Map.Entry<UUID, Set<String>> run = groupRuns.stream()
                        .filter(r -> unique.keySet().stream().noneMatch(r.getValue()::contains)).findFirst().orElse(null);
                if (run == null) {
                    run = Map.entry(Ids.next(clock), new HashSet<>());
                    groupRuns.add(run);
                    HandlerSpec.Configs configs = delivery.handler().configs();
                    runs.add(new DeliveryStore.NewRun(run.getKey(), delivery.handler().handlerKey(), delivery.handler().direction(), trigger,
                            configs.coalesceMs(), configs.orderedByRecord()));
                    runOf.put(run.getKey(), new RunOf(delivery.tenantId(), delivery.integrationKey(), delivery.handler()));
                }
                run.getValue().addAll(unique.keySet());
                int position = offered.size();
                offered.add(new DeliveryStore.Offered(delivery.tenantId(), delivery.integrationKey(), delivery.deliveryId(),
                        delivery.kept(), run.getKey()));
                for (ItemStore.NewItem item : unique.values()) {
                    items.add(new DeliveryStore.NewItem(Ids.next(clock), position, item.externalId(), payload(item)));
                }
            }
            return new Batch(trigger, given, firstCopy, offered, runs, items, runOf, duplicatesOf);
        }

        private static String payload(ItemStore.NewItem item) {
            String json = item.payload() == null ? null : Json.write(item.payload());
            if (json != null && json.contains("\\u0000")) {
                throw new Json.InvalidJsonException("item " + item.externalId() + ": payload contains \\u0000, which Postgres cannot store");
            }
            return json;
        }

        /** The messages of the items of new deliveries. */
        List<ItemJob> jobs(List<DeliveryStore.Outcome> outcomes) {
            List<ItemJob> jobs = new ArrayList<>();
            for (DeliveryStore.NewItem item : items) {
                if (outcomes.get(item.delivery()).fresh()) {
                    UUID runId = offered.get(item.delivery()).runId();
                    RunOf run = runOf.get(runId);
                    jobs.add(new ItemJob(runId, item.itemId(), run.tenantId(), run.integrationKey(), run.handler().handlerKey(),
                            run.handler().direction(), trigger, item.externalId(), 0, 0));
                }
            }
            return jobs;
        }

        /** One answer per given delivery, in order. */
        List<Accepted> answers(List<DeliveryStore.Outcome> outcomes) {
            List<Integer> positions = new ArrayList<>();
            int position = 0;
            for (int i = 0; i < given.size(); i++) {
                positions.add(firstCopy[i] == i ? position++ : -1);
            }
            List<Accepted> answers = new ArrayList<>(given.size());
            for (int i = 0; i < given.size(); i++) {
                int size = given.get(i).items().size();
                DeliveryStore.Outcome outcome = outcomes.get(positions.get(firstCopy[i]));
                boolean fresh = firstCopy[i] == i && outcome.fresh();
                answers.add(new Accepted(outcome.runId(), fresh, size, fresh ? duplicatesOf[i] : size));
            }
            return answers;
        }
    }
}
