package dev.runner.intake;

import com.fasterxml.jackson.databind.JsonNode;
import dev.runner.config.RunnerConfig;
import dev.runner.delivery.DeliveryIds;
import dev.runner.dlq.DeadLetterStore;
import dev.runner.integration.HandlerSpec;
import dev.runner.integration.IntegrationType;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.item.ItemStore;
import dev.runner.json.Json;
import dev.runner.log.Log;
import dev.runner.queue.QueueMessage;
import dev.runner.trigger.Trigger;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The ingest queue (docs/ingest.md): external producers send one item per message, each bound to its tenant by a
 * signature or by its producer's SenderId ({@link IngestBinding}). A batch's messages are accepted together through
 * the event intake ({@link EventIntake}: one statement, one send); those of one (tenant, integration, handler) share
 * a run with trigger queue, on the items-queue tier. SQS delivers at least once, so a message is deduplicated by its
 * identity (signed webhook-id or SQS message id) per tenant integration within the dedup window: a redelivery makes no
 * second run and no new item ids. A new message carrying an externalId seen before is an update of that record and is
 * processed. A message that is not a valid envelope, is not bound, or names what does not exist is kept in
 * dead_letters with the reason and acknowledged: never dropped, never retried in vain. Only the messages a failure
 * touches are retried or kept, never their neighbours.
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

    /** A message and its envelope. */
    private record Read(QueueMessage message, Envelope envelope) {}

    /** A bound message: its envelope and the identity it is deduplicated by. */
    private record Bound(QueueMessage message, Envelope envelope, String deliveryId) {}

    /** A bound message whose handler exists: what the intake takes. */
    private record Ready(QueueMessage message, EventIntake.Delivery delivery) {}

    /** What became of a batch: ids of messages to retry, messages to keep in dead_letters (and the letters). */
    private record Outcome(List<String> retry, List<QueueMessage> rejected, List<DeadLetterStore.DeadLetter> letters) {
        void reject(QueueMessage message, String reason) {
            rejected.add(message);
            letters.add(new DeadLetterStore.DeadLetter(message.sourceQueue(), reason, message.body(),
                    Map.of("messageId", String.valueOf(message.messageId()))));
        }
    }

    private final EventIntake intake;
    private final Integrations integrations;
    private final DeadLetterStore deadLetters;
    private final IngestBinding binding;
    private final RunnerConfig.Webhooks settings;

    /** @param settings the webhooks' settings, whose dedup window ingest messages share */
    public IngestService(EventIntake intake, Integrations integrations, DeadLetterStore deadLetters, IngestBinding binding,
                         RunnerConfig.Webhooks settings) {
        this.intake = intake;
        this.integrations = integrations;
        this.deadLetters = deadLetters;
        this.binding = binding;
        this.settings = settings;
    }

    /** Returns the ids of messages to retry: those a store or queue failure touched, and nothing else. */
    public List<String> process(List<QueueMessage> messages) {
        Outcome outcome = new Outcome(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        List<Read> read = new ArrayList<>();
        for (QueueMessage message : messages) {
            read(message, read, outcome);
        }
        prefetch(read);
        List<Bound> bound = new ArrayList<>();
        for (Read one : read) {
            bind(one, bound, outcome);
        }
        List<Ready> ready = resolve(bound, outcome);
        if (!ready.isEmpty()) {
            accept(ready, outcome);
        }
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

    /** Reads one message's envelope, or rejects it. */
    private static void read(QueueMessage message, List<Read> read, Outcome outcome) {
        if (message.messageId() == null || message.messageId().isBlank()) {
            outcome.reject(message, "message without a messageId");
            return;
        }
        try {
            read.add(new Read(message, Envelope.fromJson(Json.parse(message.body()))));
        } catch (RuntimeException e) {
            outcome.reject(message, "invalid envelope: " + e.getMessage());
        }
    }

    /**
     * The batch's tenant integrations (with their secrets, which signed messages are checked against) read into
     * the cache with one statement, so that binding and resolving each
     * message find them there: ten messages for ten tenants are one lookup, not ten. A failure here is left to the
     * per-message lookups, which retry only the messages they touch.
     */
    private void prefetch(List<Read> read) {
        try {
            integrations.tenantIntegrationsWithSecretsCached(read.stream()
                    .map(one -> new Integrations.TenantKey(one.envelope().tenantId(), one.envelope().integrationKey())).distinct().toList());
        } catch (RuntimeException e) {
            LOG.warn("ingest lookup failed; each message is looked up on its own", "error", e);
        }
    }

    /** Binds one message, or rejects it; a lookup that fails retries this message only. */
    private void bind(Read read, List<Bound> bound, Outcome outcome) {
        QueueMessage message = read.message();
        Envelope envelope = read.envelope();
        IngestBinding.Binding binding;
        try {
            binding = this.binding.bind(message, envelope.tenantId(), envelope.integrationKey());
        } catch (RuntimeException e) {
            LOG.error("ingest binding failed, will retry", "messageId", message.messageId(), "error", e);
            outcome.retry().add(message.messageId());
            return;
        }
        switch (binding) {
            case IngestBinding.Binding.Unbound unbound -> outcome.reject(message, unbound.reason());
            case IngestBinding.Binding.Bound ok -> bound.add(new Bound(message, envelope, ok.deliveryId()));
        }
    }

    /**
     * The handler of each bound message's tenant integration, through the cached lookups (misses too, for 5 s): a
     * batch of messages for a few tenants reads each once. One whose integration is missing, disabled or without
     * the handler is rejected; one whose lookup fails is retried.
     */
    private List<Ready> resolve(List<Bound> bound, Outcome outcome) {
        List<Ready> ready = new ArrayList<>();
        for (Bound one : bound) {
            Envelope envelope = one.envelope();
            Optional<TenantIntegration> tenant;
            Optional<HandlerSpec> handler;
            try {
                tenant = integrations.tenantIntegrationWithSecretsCached(envelope.tenantId(), envelope.integrationKey());
                handler = integrations.handlerOrRefresh(envelope.integrationKey(), envelope.handlerKey());
            } catch (RuntimeException e) {
                LOG.error("ingest lookup failed, will retry", "messageId", one.message().messageId(), "error", e);
                outcome.retry().add(one.message().messageId());
                continue;
            }
            if (tenant.isEmpty()) {
                outcome.reject(one.message(), "tenant " + envelope.tenantId() + " has no integration " + envelope.integrationKey());
            } else if (!tenant.get().enabled()) {
                outcome.reject(one.message(), "integration " + envelope.integrationKey() + " is disabled for tenant " + envelope.tenantId());
            } else if (handler.isEmpty()) {
                outcome.reject(one.message(), "integration " + envelope.integrationKey() + " has no handler " + envelope.handlerKey());
            } else {
                ready.add(new Ready(one.message(), new EventIntake.Delivery(envelope.tenantId(), envelope.integrationKey(),
                        handler.get(), one.deliveryId(), settings.dedupWindow(),
                        List.of(new ItemStore.NewItem(envelope.externalId(), envelope.payload())))));
            }
        }
        return ready;
    }

    /**
     * The batch's messages in one accept. When the store refuses the data, each message is tried on its own, so
     * that the one it refuses is kept in dead_letters and its neighbours go through; any other failure (Postgres or
     * SQS unreachable) retries them.
     */
    private void accept(List<Ready> ready, Outcome outcome) {
        try {
            logAccepted(intake.accept(Trigger.QUEUE, ready.stream().map(Ready::delivery).toList()));
            return;
        } catch (RuntimeException e) {
            if (!refusesData(e)) {
                LOG.error("ingest failed, will retry", "messages", ready.size(), "error", e);
                ready.forEach(r -> outcome.retry().add(r.message().messageId()));
                return;
            }
        }
        for (Ready one : ready) {
            try {
                logAccepted(intake.accept(Trigger.QUEUE, List.of(one.delivery())));
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

    private static void logAccepted(List<EventIntake.Accepted> accepted) {
        long fresh = accepted.stream().filter(EventIntake.Accepted::fresh).count();
        LOG.info("ingested", "messages", accepted.size(), "items", fresh, "duplicates", accepted.size() - fresh,
                "runs", accepted.stream().filter(EventIntake.Accepted::fresh).map(EventIntake.Accepted::runId).distinct().count());
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
