package dev.runner.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryIds;
import dev.runner.delivery.DeliveryStore;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.IntegrationType;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.QueueMessage;
import dev.runner.trigger.Trigger;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The ingest queue (docs/ingest.md): external producers send one item per message, each bound to its tenant by a
 * signature or by its producer's SenderId ({@link IngestBinding}). What arrives in one batch becomes one run per
 * (tenant, integration, handler) with trigger queue, on the items-queue tier. SQS delivers at least once, so a
 * message is deduplicated by its identity (signed webhook-id or SQS message id) per tenant integration, and its item
 * by externalId per handler, within the dedup window: a redelivery makes no second run and no new item ids. A
 * message that is not a valid envelope, is not bound, or names what does not exist is kept in dead_letters with the
 * reason and acknowledged: never dropped, never retried in vain. Only the messages a failure touches are retried or
 * kept, never their neighbours.
 */
public final class IngestService {

    private static final Log LOG = Log.of(IngestService.class);

    /** A validated envelope. */
    record Envelope(String tenantId, String integrationKey, String handlerKey, String externalId, JsonNode payload) {
        static Envelope fromJson(JsonNode node) {
            Json.requireObject(node, "ingest message");
            String externalId;
            JsonNode id = node.get("externalId");
            if (id != null && id.isIntegralNumber()) {
                externalId = id.asText();
            } else {
                externalId = Json.text(node, "externalId");
            }
            String problem = DeliveryIds.problem("externalId", externalId);
            if (problem != null) {
                throw new Json.InvalidJsonException(problem);
            }
            JsonNode payload = node.get("payload");
            if (payload == null || payload.isNull()) {
                throw new Json.InvalidJsonException("payload is missing");
            }
            if (Json.write(payload).contains("\\u0000")) {
                throw new Json.InvalidJsonException("payload contains \\u0000, which Postgres cannot store");
            }
            return new Envelope(IntegrationType.requireKey("tenantId", Json.text(node, "tenantId")),
                    IntegrationType.requireKey("integrationKey", Json.text(node, "integrationKey")),
                    IntegrationType.requireKey("handlerKey", Json.text(node, "handlerKey")), externalId, payload);
        }
    }

    private record Group(String tenantId, String integrationKey, String handlerKey) {}

    /** A bound message: its envelope and the identity it is deduplicated by. */
    private record Accepted(QueueMessage message, Envelope envelope, String deliveryId) {}

    /** What became of a batch: ids of messages to retry, messages to keep in dead_letters (and the letters). */
    private record Outcome(List<String> retry, List<QueueMessage> rejected, List<DeadLetterStore.DeadLetter> letters) {
        void reject(QueueMessage message, String reason) {
            rejected.add(message);
            letters.add(new DeadLetterStore.DeadLetter(message.sourceQueue(), reason, message.body(),
                    Map.of("messageId", String.valueOf(message.messageId()))));
        }
    }

    private final RunService runs;
    private final DeadLetterStore deadLetters;
    private final DeliveryStore deliveries;
    private final IngestBinding binding;
    private final RunnerConfig.Webhooks settings;

    /** @param settings the webhooks' settings, whose dedup window ingest messages share */
    public IngestService(RunService runs, DeadLetterStore deadLetters, DeliveryStore deliveries, IngestBinding binding,
                         RunnerConfig.Webhooks settings) {
        this.runs = runs;
        this.deadLetters = deadLetters;
        this.deliveries = deliveries;
        this.binding = binding;
        this.settings = settings;
    }

    /** Returns the ids of messages to retry: those a store or queue failure touched, and nothing else. */
    public List<String> process(List<QueueMessage> messages) {
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        Map<Group, List<Accepted>> groups = new LinkedHashMap<>();
        for (QueueMessage message : messages) {
            accept(message, groups, outcome);
        }
        groups.forEach((group, accepted) -> start(group, accepted, outcome));
        if (!outcome.letters().isEmpty()) {
            try {
                deadLetters.keep(outcome.letters());
                LOG.warn("ingest messages kept in dead_letters", "count", outcome.letters().size());
            } catch (RuntimeException e) {
                // Not kept, so not acknowledged either: they come back, and end in the ingest DLQ if this lasts.
                LOG.error("ingest messages could not be kept, will retry", "count", outcome.letters().size(), "error", e);
                outcome.rejected().stream().map(QueueMessage::messageId)
                        .filter(id -> id != null && !id.isBlank()).forEach(outcome.retry()::add);
            }
        }
        return outcome.retry();
    }

    /** Reads and binds one message into its group, or rejects it; a lookup that fails retries this message only. */
    private void accept(QueueMessage message, Map<Group, List<Accepted>> groups, Outcome outcome) {
        if (message.messageId() == null || message.messageId().isBlank()) {
            outcome.reject(message, "message without a messageId");
            return;
        }
        Envelope envelope;
        try {
            envelope = Envelope.fromJson(Json.parse(message.body()));
        } catch (RuntimeException e) {
            outcome.reject(message, "invalid envelope: " + e.getMessage());
            return;
        }
        IngestBinding.Binding bound;
        try {
            bound = binding.bind(message, envelope.tenantId(), envelope.integrationKey());
        } catch (RuntimeException e) {
            LOG.error("ingest binding failed, will retry", "messageId", message.messageId(), "error", e);
            outcome.retry().add(message.messageId());
            return;
        }
        switch (bound) {
            case IngestBinding.Binding.Unbound unbound -> outcome.reject(message, unbound.reason());
            case IngestBinding.Binding.Bound ok -> groups.computeIfAbsent(
                    new Group(envelope.tenantId(), envelope.integrationKey(), envelope.handlerKey()), g -> new ArrayList<>())
                    .add(new Accepted(message, envelope, ok.deliveryId()));
        }
    }

    /**
     * One run for the group. When the store refuses the group's data, each message is tried on its own, so that
     * the one it refuses is kept in dead_letters and its neighbours go through; any other failure (Postgres or SQS
     * unreachable) retries the group's messages, and only them.
     */
    private void start(Group group, List<Accepted> accepted, Outcome outcome) {
        HandlerSpec handler;
        try {
            handler = runs.requireHandler(group.tenantId(), group.integrationKey(), group.handlerKey());
        } catch (RunService.RunRefused e) {
            accepted.forEach(a -> outcome.reject(a.message(), e.getMessage()));
            return;
        } catch (RuntimeException e) {
            LOG.error("ingest lookup failed, will retry", "tenantId", group.tenantId(), "error", e);
            accepted.forEach(a -> outcome.retry().add(a.message().messageId()));
            return;
        }
        try {
            startRun(group, handler, accepted);
        } catch (RuntimeException e) {
            if (!refusesData(e)) {
                LOG.error("ingest failed, will retry", "tenantId", group.tenantId(), "messages", accepted.size(), "error", e);
                accepted.forEach(a -> outcome.retry().add(a.message().messageId()));
                return;
            }
            for (Accepted one : accepted) {
                try {
                    startRun(group, handler, List.of(one));
                } catch (RuntimeException alone) {
                    if (refusesData(alone)) {
                        outcome.reject(one.message(), "refused by the store: " + alone.getMessage());
                    } else {
                        LOG.error("ingest failed, will retry", "messageId", one.message().messageId(), "error", alone);
                        outcome.retry().add(one.message().messageId());
                    }
                }
            }
        }
    }

    private void startRun(Group group, HandlerSpec handler, List<Accepted> accepted) {
        Map<String, Accepted> byDelivery = new LinkedHashMap<>();
        accepted.forEach(a -> byDelivery.putIfAbsent(a.deliveryId(), a));
        List<ItemStore.NewItem> items = byDelivery.values().stream()
                .map(a -> new ItemStore.NewItem(a.envelope().externalId(), a.envelope().payload())).toList();
        RunService.Started started = runs.startWithItems(group.tenantId(), group.integrationKey(), handler, Trigger.QUEUE, items,
                (connection, runId, candidates) -> unseen(connection, group, runId, byDelivery));
        LOG.info("ingested", "runId", started.runId(), "tenantId", group.tenantId(), "messages", accepted.size(),
                "items", started.enqueued(), "duplicates", accepted.size() - started.enqueued());
    }

    /** Records the messages' identities, then the items of the new ones, and keeps the items not seen. Two statements. */
    private List<ItemStore.NewItem> unseen(Connection connection, Group group, UUID runId, Map<String, Accepted> byDelivery)
            throws SQLException {
        Set<String> newDeliveries = deliveries.recordDeliveries(connection, group.tenantId(), group.integrationKey(),
                byDelivery.keySet(), runId, settings.dedupWindow());
        List<ItemStore.NewItem> candidates = byDelivery.values().stream()
                .filter(a -> newDeliveries.contains(a.deliveryId()))
                .map(a -> new ItemStore.NewItem(a.envelope().externalId(), a.envelope().payload())).toList();
        if (candidates.isEmpty()) {
            return List.of();
        }
        Set<String> fresh = deliveries.recordUnseen(connection, group.tenantId(), group.integrationKey(), group.handlerKey(),
                candidates.stream().map(ItemStore.NewItem::externalId).toList(), settings.dedupWindow());
        return candidates.stream().filter(item -> fresh.contains(item.externalId())).toList();
    }

    /**
     * Whether Postgres refused the data itself (SQLSTATE class 22 data exception, 23 integrity violation, 54 program
     * limit such as an index row too large), which no retry can change, as opposed to being unreachable or busy.
     */
    static boolean refusesData(Throwable failure) {
        if (failure instanceof Json.InvalidJsonException) {
            return true;
        }
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().length() >= 2) {
                String sqlClass = sql.getSQLState().substring(0, 2);
                return sqlClass.equals("22") || sqlClass.equals("23") || sqlClass.equals("54");
            }
        }
        return false;
    }
}
