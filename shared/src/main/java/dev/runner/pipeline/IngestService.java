package dev.runner.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.IntegrationType;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.QueueMessage;
import dev.runner.trigger.Trigger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The ingest queue (DESIGN 3.6): external producers send one item per message. What arrives in
 * one batch becomes one run per (tenant, integration, handler) with trigger queue, on the
 * items-queue tier. A message that is not a valid envelope, or names what does not exist, is
 * kept in dead_letters with the reason and acknowledged: never dropped, never retried in vain.
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

    private record Accepted(QueueMessage message, Envelope envelope) {}

    private final RunService runs;
    private final DeadLetterStore deadLetters;

    public IngestService(RunService runs, DeadLetterStore deadLetters) {
        this.runs = runs;
        this.deadLetters = deadLetters;
    }

    /** Returns the ids of messages to retry (a store or queue failure for their group). */
    public List<String> process(List<QueueMessage> messages) {
        List<DeadLetterStore.DeadLetter> rejected = new ArrayList<>();
        Map<Group, List<Accepted>> groups = new LinkedHashMap<>();
        for (QueueMessage message : messages) {
            try {
                Envelope envelope = Envelope.fromJson(Json.parse(message.body()));
                groups.computeIfAbsent(new Group(envelope.tenantId(), envelope.integrationKey(), envelope.handlerKey()),
                        g -> new ArrayList<>()).add(new Accepted(message, envelope));
            } catch (Json.InvalidJsonException e) {
                rejected.add(reject(message, "invalid envelope: " + e.getMessage()));
            }
        }
        List<String> retry = new ArrayList<>();
        for (var entry : groups.entrySet()) {
            Group group = entry.getKey();
            List<Accepted> accepted = entry.getValue();
            HandlerSpec handler;
            try {
                handler = runs.requireHandler(group.tenantId(), group.integrationKey(), group.handlerKey());
            } catch (RunService.RunRefused e) {
                accepted.forEach(a -> rejected.add(reject(a.message(), e.getMessage())));
                continue;
            }
            List<ItemStore.NewItem> items = accepted.stream()
                    .map(a -> new ItemStore.NewItem(a.envelope().externalId(), a.envelope().payload())).toList();
            try {
                RunService.Started started = runs.startWithItems(group.tenantId(), group.integrationKey(), handler,
                        Trigger.QUEUE, items, RunService.Keep.ALL);
                LOG.info("ingested", "runId", started.runId(), "tenantId", group.tenantId(), "items", started.enqueued());
            } catch (RuntimeException e) {
                LOG.error("ingest failed, will retry", "tenantId", group.tenantId(), "error", e);
                accepted.forEach(a -> retry.add(a.message().messageId()));
            }
        }
        if (!rejected.isEmpty()) {
            deadLetters.keep(rejected);
            LOG.warn("ingest messages kept in dead_letters", "count", rejected.size());
        }
        return retry;
    }

    private static DeadLetterStore.DeadLetter reject(QueueMessage message, String reason) {
        return new DeadLetterStore.DeadLetter(message.sourceQueue(), reason, message.body(), Map.of("messageId", message.messageId()));
    }
}
