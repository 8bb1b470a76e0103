package dev.runner.item;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.config.RunnerConfig;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.handler.HandlerClient;
import dev.runner.handler.Outcome;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.Integrations;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.OutgoingMessage;
import dev.runner.queue.QueueClient;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunStore;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Processes one SQS batch of items (DESIGN 4): parse, group by handler, claim, call, record,
 * complete runs. What one all-success batch costs: 3 Postgres statements (claim, record, complete),
 * one handler call per {@code batch_size} items for batch handlers, no SQS request of its own
 * (receive and delete belong to the event source mapping).
 */
public final class ItemWorker {

    private static final Log LOG = Log.of(ItemWorker.class);
    /** SQS's longest visibility timeout. */
    private static final int MAX_VISIBILITY_SECONDS = 43_200;

    /** Message ids the event source must not delete: they come back after their visibility timeout. */
    public record BatchResult(List<String> failedMessageIds) {}

    private record Received(QueueMessage message, ItemJob job) {}

    private record Group(String integrationKey, String handlerKey) {}

    private final RunnerConfig config;
    private final ItemStore items;
    private final RunStore runs;
    private final Integrations integrations;
    private final HandlerClient handlers;
    private final QueueClient queues;
    private final DeadLetterStore deadLetters;
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();

    public ItemWorker(RunnerConfig config, ItemStore items, RunStore runs, Integrations integrations,
                      HandlerClient handlers, QueueClient queues, DeadLetterStore deadLetters) {
        this.config = config;
        this.items = items;
        this.runs = runs;
        this.integrations = integrations;
        this.handlers = handlers;
        this.queues = queues;
        this.deadLetters = deadLetters;
    }

    public BatchResult process(List<QueueMessage> messages) {
        List<Received> received = parse(messages);
        if (received.isEmpty()) {
            return new BatchResult(List.of());
        }
        Map<UUID, Received> byItem = new LinkedHashMap<>();
        for (Received r : received) {
            byItem.putIfAbsent(r.job().itemId(), r);
        }
        Map<UUID, ItemStore.Claimed> claimed = items.claim(byItem.keySet(), config.itemClaimLease());
        if (claimed.size() < byItem.size()) {
            LOG.info("skipped", "items", byItem.size() - claimed.size(), "why", "already ended, parked or being processed");
        }
        Map<Group, List<Received>> groups = new LinkedHashMap<>();
        for (Received r : byItem.values()) {
            if (claimed.containsKey(r.job().itemId())) {
                groups.computeIfAbsent(new Group(r.job().integrationKey(), r.job().handlerKey()), g -> new ArrayList<>()).add(r);
            }
        }
        Map<UUID, Outcome> outcomes = callHandlers(groups, claimed);
        return settle(byItem, claimed, outcomes);
    }

    private List<Received> parse(List<QueueMessage> messages) {
        List<Received> received = new ArrayList<>(messages.size());
        List<DeadLetterStore.DeadLetter> unreadable = new ArrayList<>();
        for (QueueMessage message : messages) {
            try {
                received.add(new Received(message, ItemJob.fromJson(Json.parse(message.body()))));
            } catch (Json.InvalidJsonException e) {
                unreadable.add(new DeadLetterStore.DeadLetter(message.sourceQueue(), "unreadable item job: " + e.getMessage(),
                        message.body(), Map.of("messageId", message.messageId())));
            }
        }
        if (!unreadable.isEmpty()) {
            deadLetters.keep(unreadable);
            LOG.warn("kept unreadable messages", "count", unreadable.size());
        }
        return received;
    }

    /** Every group's calls at once; a group's handler sees batches of its batch_size, or one call per item. */
    private Map<UUID, Outcome> callHandlers(Map<Group, List<Received>> groups, Map<UUID, ItemStore.Claimed> claimed) {
        List<Future<Map<UUID, Outcome>>> pending = new ArrayList<>();
        Map<UUID, Outcome> outcomes = new HashMap<>();
        for (var entry : groups.entrySet()) {
            Group group = entry.getKey();
            Optional<HandlerSpec> handler = integrations.handler(group.integrationKey(), group.handlerKey());
            if (handler.isEmpty()) {
                Outcome unknown = new Outcome.Failed("unknown handler " + group.integrationKey() + "/" + group.handlerKey(), false);
                entry.getValue().forEach(r -> outcomes.put(r.job().itemId(), unknown));
                continue;
            }
            HandlerSpec spec = handler.get();
            List<Received> members = entry.getValue();
            if (spec.batch()) {
                int size = spec.configs().batchSize();
                for (int from = 0; from < members.size(); from += size) {
                    List<Received> chunk = members.subList(from, Math.min(members.size(), from + size));
                    pending.add(calls.submit(() -> callBatch(spec, chunk, claimed)));
                }
            } else {
                for (Received member : members) {
                    pending.add(calls.submit(() -> Map.of(member.job().itemId(), callOne(spec, member, claimed))));
                }
            }
        }
        for (Future<Map<UUID, Outcome>> future : pending) {
            try {
                outcomes.putAll(future.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while calling handlers", e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException("handler call crashed", e.getCause());
            }
        }
        return outcomes;
    }

    private Map<UUID, Outcome> callBatch(HandlerSpec spec, List<Received> chunk, Map<UUID, ItemStore.Claimed> claimed) {
        List<ObjectNode> bodies = new ArrayList<>(chunk.size());
        List<String> ids = new ArrayList<>(chunk.size());
        for (Received r : chunk) {
            bodies.add(itemBody(r.job(), claimed.get(r.job().itemId())));
            ids.add(r.job().itemId().toString());
        }
        Map<String, Outcome> byId = handlers.processBatch(spec, bodies, ids);
        Map<UUID, Outcome> outcomes = new HashMap<>();
        byId.forEach((id, outcome) -> outcomes.put(UUID.fromString(id), outcome));
        return outcomes;
    }

    private Outcome callOne(HandlerSpec spec, Received r, Map<UUID, ItemStore.Claimed> claimed) {
        return handlers.process(spec, itemBody(r.job(), claimed.get(r.job().itemId())), r.job().itemId().toString());
    }

    /** The item as the handler contract shows it (DESIGN 3.3). */
    static ObjectNode itemBody(ItemJob job, ItemStore.Claimed claim) {
        ObjectNode item = Json.object();
        item.put("itemId", job.itemId().toString());
        item.put("runId", job.runId().toString());
        item.put("tenantId", job.tenantId());
        item.put("integrationKey", job.integrationKey());
        item.put("handlerKey", job.handlerKey());
        item.put("direction", job.direction().wireName());
        item.put("externalId", job.externalId());
        item.set("payload", claim.payload());
        item.put("attempt", claim.attempt());
        return item;
    }

    /**
     * Turns outcomes into state: succeeded recorded; retryable failures wait out their backoff as
     * the same message (ChangeMessageVisibility, then listed as failed); final or permanent failures
     * go to the items DLQ, whose consumer stamps dlq_at; handler deferrals are re-sent delayed.
     */
    private BatchResult settle(Map<UUID, Received> byItem, Map<UUID, ItemStore.Claimed> claimed, Map<UUID, Outcome> outcomes) {
        List<ItemStore.Result> results = new ArrayList<>();
        List<String> failedMessageIds = new ArrayList<>();
        Map<String, List<QueueClient.VisibilityChange>> backoffs = new HashMap<>();
        Map<String, List<OutgoingMessage>> resends = new HashMap<>();
        List<OutgoingMessage> toDlq = new ArrayList<>();
        List<UUID> toDlqIds = new ArrayList<>();
        Set<UUID> endedRuns = new LinkedHashSet<>();
        int maxAttempts = config.retry().maxAttempts();

        for (var entry : outcomes.entrySet()) {
            UUID itemId = entry.getKey();
            Received r = byItem.get(itemId);
            int attempt = claimed.get(itemId).attempt();
            switch (entry.getValue()) {
                case Outcome.Succeeded s -> {
                    results.add(new ItemStore.Result.Succeeded(itemId));
                    endedRuns.add(r.job().runId());
                }
                case Outcome.Failed f when f.retryable() && attempt < maxAttempts -> {
                    results.add(new ItemStore.Result.Retrying(itemId, f.error()));
                    int seconds = (int) Math.min(MAX_VISIBILITY_SECONDS,
                            Math.max(1, Math.ceilDiv(config.retry().backoff(attempt).toMillis(), 1000)));
                    backoffs.computeIfAbsent(queueUrl(r), q -> new ArrayList<>())
                            .add(new QueueClient.VisibilityChange(r.message().receiptHandle(), seconds));
                    failedMessageIds.add(r.message().messageId());
                }
                case Outcome.Failed f -> {
                    String error = f.retryable() ? f.error() + " (attempt " + attempt + " of " + maxAttempts + ")" : f.error();
                    ObjectNode body = r.job().withAttempt(attempt).toJson();
                    body.put("error", error);
                    toDlq.add(OutgoingMessage.of(Json.write(body), r.job().tenantId()));
                    toDlqIds.add(itemId);
                    results.add(new ItemStore.Result.HandedToDlq(itemId, error));
                }
                case Outcome.Deferred d -> {
                    results.add(new ItemStore.Result.Deferred(itemId));
                    int delay = (int) Math.min(OutgoingMessage.MAX_DELAY_SECONDS, Math.max(1, d.delay().toSeconds()));
                    resends.computeIfAbsent(config.queues().items(r.job().trigger()), q -> new ArrayList<>())
                            .add(new OutgoingMessage(Json.write(r.job().withAttempt(attempt - 1).deferred().toJson()), delay, r.job().tenantId()));
                }
            }
        }
        if (!toDlq.isEmpty()) {
            queues.sendAll(config.queues().itemsDlq(), toDlq);
            LOG.warn("sent to DLQ", "items", toDlq.size());
        }
        resends.forEach(queues::sendAll);
        items.record(results);
        backoffs.forEach(queues::changeVisibility);
        if (!endedRuns.isEmpty()) {
            runs.completeIfDone(endedRuns);
        }
        return new BatchResult(failedMessageIds);
    }

    /** The queue the message came from, by name; its trigger's tier when the source is unknown. */
    private String queueUrl(Received r) {
        String source = r.message().sourceQueue();
        String tier = config.queues().items(r.job().trigger());
        if (source == null || tier.endsWith("/" + source)) {
            return tier;
        }
        return config.queues().items().values().stream().filter(url -> url.endsWith("/" + source)).findFirst().orElse(tier);
    }
}
