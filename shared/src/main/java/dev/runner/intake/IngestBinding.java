package dev.runner.intake;

import dev.runner.delivery.DeliveryIds;
import dev.runner.delivery.IngestProducers;
import dev.runner.integration.Integrations;
import dev.runner.integration.TenantIntegration;
import dev.runner.queue.QueueMessage;
import dev.runner.security.StandardWebhooks;
import dev.runner.security.WebhookScheme;
import dev.runner.security.WebhookVerification;
import dev.runner.security.WebhookVerifier;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether an ingest message may act for the tenant its envelope names (docs/ingest.md): it is signed as a Standard
 * Webhook with the tenant integration's secret (string message attributes {@code webhook-id},
 * {@code webhook-timestamp}, {@code webhook-signature}, over the body), or its producer's SQS {@code SenderId} is
 * bound to the tenant. Anyone who may send to the queue can set attributes, no one but SQS sets SenderId.
 */
public final class IngestBinding {

    /** System attributes SQS sets on every message. */
    static final String SENDER_ID = "SenderId";
    static final String SENT_TIMESTAMP = "SentTimestamp";
    private static final List<String> SIGNATURE_ATTRIBUTES = List.of(StandardWebhooks.ID_HEADER, StandardWebhooks.TIMESTAMP_HEADER,
            StandardWebhooks.SIGNATURE_HEADER);

    sealed interface Binding {
        /** @param deliveryId the message's identity for dedup: its signed webhook-id, else its SQS message id */
        record Bound(String deliveryId) implements Binding {}

        /** @param reason what dead_letters keeps */
        record Unbound(String reason) implements Binding {}
    }

    private final Integrations integrations;
    private final IngestProducers producers;
    private final Duration tolerance;
    private final Clock clock;

    /** @param tolerance how far a signed message's timestamp may be from now (the webhooks' signature tolerance) */
    public IngestBinding(Integrations integrations, IngestProducers producers, Duration tolerance, Clock clock) {
        this.integrations = integrations;
        this.producers = producers;
        this.tolerance = tolerance;
        this.clock = clock;
    }

    Binding bind(QueueMessage message, String tenantId, String integrationKey) {
        boolean signed = SIGNATURE_ATTRIBUTES.stream().anyMatch(name -> message.attributes().containsKey(name));
        String refusal = null;
        if (signed) {
            String id = message.attributes().get(StandardWebhooks.ID_HEADER);
            Optional<TenantIntegration> tenant = integrations.tenantIntegrationWithSecretsCached(tenantId, integrationKey);
            String badId = id == null ? null : DeliveryIds.problem(StandardWebhooks.ID_HEADER, id);
            if (badId != null) {
                refusal = badId;
            } else if (tenant.isEmpty()) {
                refusal = "tenant " + tenantId + " has no integration " + integrationKey;
            } else {
                WebhookVerification verification = WebhookVerifier.verify(WebhookScheme.STANDARD, tenant.get().webhookSecrets(),
                        message.attributes()::get, message.body().getBytes(StandardCharsets.UTF_8), sentAt(message), tolerance);
                if (verification instanceof WebhookVerification.Verified verified) {
                    return new Binding.Bound(verified.deliveryId());
                }
                refusal = "webhook signature refused ("
                        + ((WebhookVerification.Refused) verification).reason().name().toLowerCase(Locale.ROOT) + ")";
            }
        }
        String sender = message.systemAttributes().get(SENDER_ID);
        if (producers.mayActFor(sender, tenantId)) {
            return new Binding.Bound("sqs:" + message.messageId());
        }
        String senderRefusal = sender == null ? "no SenderId" : "SenderId " + sender + " may not act for tenant " + tenantId;
        return new Binding.Unbound("unbound: " + (signed ? refusal : "no webhook-signature attributes") + ", and " + senderRefusal);
    }

    /**
     * When SQS took the message: the signature must be this fresh then, not at receipt, so that a message that
     * waited in a backlog (or through an outage) is not refused for its age; a capture sent again gets a new one.
     */
    private Instant sentAt(QueueMessage message) {
        String sent = message.systemAttributes().get(SENT_TIMESTAMP);
        if (sent != null && sent.matches("[0-9]{1,15}")) {
            return Instant.ofEpochMilli(Long.parseLong(sent));
        }
        return clock.instant();
    }
}
